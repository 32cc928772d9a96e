package dedup

import "math/bits"

// SimHash is Charikar's fingerprint of a shingle set: bit i is set when most shingles' hashes
// have bit i set. Similar sets get fingerprints a small Hamming distance apart.
func SimHash(shingles []uint64) uint64 {
	var votes [64]int32
	for _, s := range shingles {
		for i := range votes {
			if s&(1<<i) != 0 {
				votes[i]++
			} else {
				votes[i]--
			}
		}
	}
	var fp uint64
	for i, v := range votes {
		if v > 0 {
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
