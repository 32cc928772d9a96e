package dedup

import (
	"hash/fnv"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// shinglesByFields is Shingles as it was written before it found words in place
// (strings.FieldsFunc, strings.ToLower, hash/fnv): the fingerprints of documents already saved
// were made by it, so the two must agree on every text.
func shinglesByFields(text string) []uint64 {
	seen := map[uint64]struct{}{}
	var out []uint64
	var window [ShingleWords]uint64
	n := 0
	for _, w := range strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len(w) > maxWordBytes {
			continue
		}
		copy(window[:], window[1:])
		h := fnv.New64a()
		_, _ = h.Write([]byte(strings.ToLower(w)))
		window[ShingleWords-1] = h.Sum64()
		if n++; n < ShingleWords {
			continue
		}
		var x uint64
		for i, wh := range window {
			x ^= bits.RotateLeft64(wh, 21*i)
		}
		x = mix(x)
		if _, dup := seen[x]; dup {
			continue
		}
		seen[x] = struct{}{}
		if out = append(out, x); len(out) >= MaxShingles {
			break
		}
	}
	return out
}

// Shingles agrees with the way it was first written on every kind of text: cased and
// accented words, scripts without spaces, invalid UTF-8, words at the length cap, a text
// past MaxShingles, and random runes.
func TestShinglesAgreeWithTheirFirstWriting(t *testing.T) {
	texts := []string{"", "one", "The Quick BROWN fox, jumps; over the lazy dog!",
		"Ünïcödé ÄÖÜ straße İstanbul ΣΊΣΥΦΟΣ Привет МИР 東京の天気は晴れです 🙂 a1 B2 c3",
		"\xff\xfe\x00 word \x80 more\xc3 words\xe2\x82 here ok", strings.Repeat("x", maxWordBytes) + " a b " + strings.Repeat("y", maxWordBytes+1) + " c d",
		"trailing words without a stop", "  leading and   many    spaces\t\n"}
	var long strings.Builder
	for i := range MaxShingles + 500 {
		long.WriteString("w")
		long.WriteString(strings.Repeat("q", i%7))
		long.WriteString(string(rune('a' + i%26)))
		long.WriteString(" ")
		long.WriteString(string(rune('A' + i/26%26)))
		long.WriteString(string(rune('a' + i/676%26)))
		long.WriteString(" ")
	}
	texts = append(texts, long.String())
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []rune("aAzZ09 .,-ßÄİıΣσЖж東京🙂\u0301\u00a0\t")
	for range 300 {
		var b strings.Builder
		for range rng.IntN(400) {
			if rng.IntN(50) == 0 {
				b.WriteByte(byte(0x80 + rng.IntN(0x40))) // a stray continuation byte
				continue
			}
			b.WriteRune(alphabet[rng.IntN(len(alphabet))])
		}
		texts = append(texts, b.String())
	}
	for _, doc := range GenerateCorpus(7, 40) {
		texts = append(texts, doc.Text)
	}
	for i, text := range texts {
		if got, want := Shingles(text), shinglesByFields(text); !slices.Equal(got, want) {
			t.Fatalf("text %d (%.60q): %d shingles, want %d as first written", i, text, len(got), len(want))
		}
	}
}

func BenchmarkShingles(b *testing.B) {
	text := GenerateArticles(1, 1)[0].Text
	b.ReportAllocs()
	for b.Loop() {
		Shingles(text)
	}
}
