package dedup

import (
	"encoding/binary"
	"fmt"
	"math"
)

// MinHash computes signatures of n min-wise hashes; hash i of a shingle is a SplitMix64 of the
// shingle hash xor a per-i seed, which is as good as a random permutation for estimating
// Jaccard similarity and far cheaper than modular arithmetic.
type MinHash struct {
	seeds []uint64
}

// NewMinHash returns a signer of n hashes (n ≥ 1).
func NewMinHash(n int) *MinHash {
	m := &MinHash{seeds: make([]uint64, n)}
	s := uint64(0x7261776c6572) // fixed: signatures must agree across processes and releases
	for i := range m.seeds {
		s += 0x9e3779b97f4a7c15
		m.seeds[i] = mix(s)
	}
	return m
}

// Signature is the minimum of each hash over the shingles (the low 32 bits suffice: a false
// collision of two minima has probability 2⁻³², negligible next to the estimate's own error).
// Four hashes at a time over all shingles: their minima stay in registers (shingle by
// shingle, every hash's minimum was a load and a store per shingle), and the four mixes of a
// shingle are independent, so the CPU overlaps their multiplies (one hash at a time waited on
// each mix's chain of two).
func (m *MinHash) Signature(shingles []uint64) []uint32 {
	sig := make([]uint32, len(m.seeds))
	i := 0
	for ; i+4 <= len(m.seeds); i += 4 {
		s0, s1, s2, s3 := m.seeds[i], m.seeds[i+1], m.seeds[i+2], m.seeds[i+3]
		l0, l1, l2, l3 := uint32(math.MaxUint32), uint32(math.MaxUint32), uint32(math.MaxUint32), uint32(math.MaxUint32)
		for _, s := range shingles {
			l0 = min(l0, uint32(mix(s^s0)))
			l1 = min(l1, uint32(mix(s^s1)))
			l2 = min(l2, uint32(mix(s^s2)))
			l3 = min(l3, uint32(mix(s^s3)))
		}
		sig[i], sig[i+1], sig[i+2], sig[i+3] = l0, l1, l2, l3
	}
	for ; i < len(m.seeds); i++ {
		low, seed := uint32(math.MaxUint32), m.seeds[i]
		for _, s := range shingles {
			low = min(low, uint32(mix(s^seed)))
		}
		sig[i] = low
	}
	return sig
}

// Jaccard estimates the Jaccard similarity of the sets behind two signatures of equal length:
// the fraction of positions where they agree.
func Jaccard(a, b []uint32) float64 {
	if len(a) != len(b) || len(a) == 0 {
		return 0
	}
	same := 0
	for i := range a {
		if a[i] == b[i] {
			same++
		}
	}
	return float64(same) / float64(len(a))
}

// Banding is an LSH layout: a signature is cut into Bands bands of Rows rows; two documents
// become candidates when they agree on a whole band.
type Banding struct{ Bands, Rows int }

// BandingFor picks the banding of at most n rows whose S-curve turns a little below the
// threshold t — (1/b)^(1/r) ≈ t − 0.05 — so pairs at the threshold are found with high
// probability and the exact estimate then rejects those below it.
func BandingFor(n int, t float64) (Banding, error) {
	if n < 1 || t <= 0 || t > 1 {
		return Banding{}, fmt.Errorf("dedup: no banding for %d hashes at threshold %v", n, t)
	}
	target := t - 0.05
	best, bestErr := Banding{Bands: n, Rows: 1}, math.Inf(1)
	for r := 1; r <= n; r++ {
		b := n / r
		if e := math.Abs(math.Pow(1/float64(b), 1/float64(r)) - target); e < bestErr {
			best, bestErr = Banding{Bands: b, Rows: r}, e
		}
	}
	return best, nil
}

// Keys returns one index key per band: a hash of the band's number and its rows.
func (b Banding) Keys(sig []uint32) []int64 {
	keys := make([]int64, 0, b.Bands)
	for band := 0; band < b.Bands && (band+1)*b.Rows <= len(sig); band++ {
		h := mix(uint64(band) + 0x6d696e68617368)
		for _, v := range sig[band*b.Rows : (band+1)*b.Rows] {
			h = mix(h ^ uint64(v))
		}
		keys = append(keys, int64(h|1<<62)) // bit 62 keeps band keys apart from SimHash block keys
	}
	return keys
}

// EncodeSignature packs a signature little-endian, 4 bytes a hash, for storage.
func EncodeSignature(sig []uint32) []byte {
	out := make([]byte, 4*len(sig))
	for i, v := range sig {
		binary.LittleEndian.PutUint32(out[4*i:], v)
	}
	return out
}

// DecodeSignature unpacks EncodeSignature's bytes.
func DecodeSignature(b []byte) []uint32 {
	sig := make([]uint32, len(b)/4)
	for i := range sig {
		sig[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return sig
}
