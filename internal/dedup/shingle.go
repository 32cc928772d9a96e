// Package dedup owns near-duplicate detection over a document's extracted text: word
// shingles, 64-bit SimHash fingerprints with the permuted-block index of Manku, Jain and Das
// Sarma (WWW 2007), and MinHash signatures with LSH banding. It computes fingerprints, the
// index keys a store looks candidates up by, and the verdict on a candidate; where the
// fingerprints live (Postgres in production, memory in tests and benchmarks) is the caller's.
package dedup

import (
	"math/bits"
	"unicode"
	"unicode/utf8"
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
	// Sized for the text at once (a word and its space are six bytes or more in most
	// languages): the set and the slice grown step by step were most of what a page's
	// fingerprint allocated.
	est := min(MaxShingles, len(text)/6+8)
	seen := make(map[uint64]struct{}, est)
	out := make([]uint64, 0, est)
	var window [ShingleWords]uint64
	n := 0
	// add takes the next word; false once the text has given MaxShingles shingles.
	add := func(w string) bool {
		if len(w) > maxWordBytes {
			return true
		}
		copy(window[:], window[1:])
		window[ShingleWords-1] = wordHash(w)
		n++
		if n < ShingleWords {
			return true
		}
		var h uint64
		for i, wh := range window {
			h ^= bits.RotateLeft64(wh, 21*i)
		}
		h = mix(h)
		if _, dup := seen[h]; dup {
			return true
		}
		seen[h] = struct{}{}
		out = append(out, h)
		return len(out) < MaxShingles
	}
	// The words are found in place (strings.FieldsFunc's rule, without its slice of every
	// word: a sixth of the bytes the processing worker allocated).
	start := -1
	for i, r := range text {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			if !add(text[start:i]) {
				return out
			}
			start = -1
		}
	}
	if start >= 0 {
		add(text[start:])
	}
	return out
}

// FNV-1a's 64-bit parameters (hash/fnv's New64a, without its allocations).
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// wordHash is the FNV-1a hash of the word lower-cased (as strings.ToLower would, without the
// copy): a word is letters and digits, valid UTF-8.
func wordHash(w string) uint64 {
	h := uint64(fnvOffset)
	for i := 0; i < len(w); {
		c := w[i]
		if c < utf8.RuneSelf {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			h = (h ^ uint64(c)) * fnvPrime
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(w[i:])
		var buf [utf8.UTFMax]byte
		for _, b := range buf[:utf8.EncodeRune(buf[:], unicode.ToLower(r))] {
			h = (h ^ uint64(b)) * fnvPrime
		}
		i += size
	}
	return h
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
