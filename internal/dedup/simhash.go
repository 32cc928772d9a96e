package dedup

import "math/bits"

// SimHash is Charikar's fingerprint of a shingle set: bit i is set when most shingles' hashes
// have bit i set. Similar sets get fingerprints a small Hamming distance apart.
func SimHash(shingles []uint64) uint64 {
	// Bit-sliced counting: lane j of acc[k] (one byte) counts the shingles with bit 8j+k set,
	// eight bits per shift-and-add instead of a branch per bit (the bits are random, so
	// branches mispredict half the time). A byte lane holds 255: flush into ones before that.
	var ones [64]int32
	var acc [8]uint64
	const lanes = 0x0101010101010101
	flush := func() {
		for k, a := range acc {
			for j := 0; j < 8; j++ {
				ones[8*j+k] += int32(a >> (8 * j) & 0xff)
			}
			acc[k] = 0
		}
	}
	for n, s := range shingles {
		if n%255 == 254 {
			flush()
		}
		acc[0] += s & lanes
		acc[1] += s >> 1 & lanes
		acc[2] += s >> 2 & lanes
		acc[3] += s >> 3 & lanes
		acc[4] += s >> 4 & lanes
		acc[5] += s >> 5 & lanes
		acc[6] += s >> 6 & lanes
		acc[7] += s >> 7 & lanes
	}
	flush()
	// Bit i is set when more shingles have it than not: ones > n - ones.
	n := int32(len(shingles))
	var fp uint64
	for i, o := range ones {
		if 2*o > n {
			fp |= 1 << i
		}
	}
	return fp
}

// Hamming is the number of bits in which a and b differ.
func Hamming(a, b uint64) int { return bits.OnesCount64(a ^ b) }

// SimHashBlocks is the number of 16-bit blocks a fingerprint is cut into for the index. Two
// fingerprints at most SimHashBlocks-1 = 3 bits apart agree on at least one whole block
// (pigeonhole), so one exact-match probe per block finds every candidate: the permuted-table
// scheme of Manku et al. with 4 tables, each keyed on a different block.
const SimHashBlocks = 4

// MaxSimHashDistance is the largest distance the block index is guaranteed to find.
const MaxSimHashDistance = SimHashBlocks - 1

// SimHashKeys returns the fingerprint's index keys, one per block: the block's number in the
// top bits, its value in the low 16.
func SimHashKeys(fp uint64) []int64 {
	keys := make([]int64, SimHashBlocks)
	for i := range keys {
		keys[i] = int64(i)<<16 | int64(fp>>(16*i)&0xffff)
	}
	return keys
}
