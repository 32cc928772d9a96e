// Package dedup owns near-duplicate detection over a document's extracted text: word
// shingles, 64-bit SimHash fingerprints with the permuted-block index of Manku, Jain and Das
// Sarma (WWW 2007), and MinHash signatures with LSH banding. It computes fingerprints, the
// index keys a store looks candidates up by, and the verdict on a candidate; where the
// fingerprints live (Postgres in production, memory in tests and benchmarks) is the caller's.
package dedup

import (
	"hash/fnv"
	"math/bits"
	"strings"
	"unicode"
)

// ShingleWords is the number of consecutive words in a shingle.
const ShingleWords = 3

// MaxShingles caps the work per document: a page's first MaxShingles distinct shingles stand
// for it (a near-duplicate pair agrees on its beginning as on the rest).
const MaxShingles = 20000

// MinShingles is the fewest distinct shingles a text needs for a near-duplicate verdict:
// below it, every short page ("Not found", a login form) would resemble every other.
const MinShingles = 20

// maxWordBytes ignores absurd "words" (base64 blobs, minified code) beyond this length.
const maxWordBytes = 64

// Shingles returns the distinct hashes of the text's ShingleWords-word shingles, in first-seen
// order. Words are maximal runs of letters and digits, lower-cased; the text may be any
// string (invalid UTF-8 decodes as replacement characters, which separate words).
func Shingles(text string) []uint64 {
	seen := make(map[uint64]struct{}, 256)
	var out []uint64
	var window [ShingleWords]uint64
	n := 0
	for _, w := range strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len(w) > maxWordBytes {
			continue
		}
		copy(window[:], window[1:])
		window[ShingleWords-1] = wordHash(strings.ToLower(w))
		n++
		if n < ShingleWords {
			continue
		}
		var h uint64
		for i, wh := range window {
			h ^= bits.RotateLeft64(wh, 21*i)
		}
		h = mix(h)
		if _, dup := seen[h]; dup {
			continue
		}
		seen[h] = struct{}{}
		out = append(out, h)
		if len(out) >= MaxShingles {
			break
		}
	}
	return out
}

func wordHash(w string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(w))
	return h.Sum64()
}

// mix is SplitMix64's finaliser: a cheap, well-distributed 64-bit permutation.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
