package parse

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// collapseByRune is collapse as a plain loop over runes: what the ASCII fast path must
// reproduce. A separating space that the cap leaves without its rune is not written.
func collapseByRune(s string, max int) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) {
			space = true
			continue
		}
		sep := space && b.Len() > 0
		space = false
		need := utf8.RuneLen(r)
		if sep {
			need++
		}
		if b.Len()+need > max {
			break
		}
		if sep {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// collapse folds white space as unicode.IsSpace says (ASCII, U+0085, U+00A0, U+2003…), writes
// an invalid byte as U+FFFD, and never writes more than max bytes, a separating space
// included (random strings of ASCII, multi-byte runes, spaces and broken bytes).
func TestCollapseFoldsSpaceAndKeepsItsCap(t *testing.T) {
	parts := []string{"a", "Z", "é", "日本", "😀", " ", "\t", "\n", "\r\n", "\v", "\f", "\u0085", "\u00a0", "\u2003", "\u3000",
		"\xff", "\xe6\x97", "\uFFFD", "word", ".", "\x00"}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		var sb strings.Builder
		for range rng.IntN(30) {
			sb.WriteString(parts[rng.IntN(len(parts))])
		}
		s, max := sb.String(), rng.IntN(40)
		got, want := collapse(s, max), collapseByRune(s, max)
		if got != want {
			t.Fatalf("collapse(%q, %d) = %q, want %q", s, max, got, want)
		}
		if len(got) > max || strings.HasPrefix(got, " ") || strings.HasSuffix(got, " ") || !utf8.ValidString(got) {
			t.Fatalf("collapse(%q, %d) = %q: over its cap, edged with space or not UTF-8", s, max, got)
		}
	}
	if got := collapse("ab", -1); got != "" {
		t.Fatalf("a negative cap: %q, want nothing", got)
	}
	if got := collapse("ab  cd", 3); got != "ab" {
		t.Fatalf("a space the cap leaves alone: %q, want %q", got, "ab")
	}
}

// BenchmarkCollapse is collapse over a page's visible text (60 KB, mostly ASCII).
func BenchmarkCollapse(b *testing.B) {
	s := strings.Repeat("Some   visible\ttext of a page, with a café\u00a0and\n\n more words. ", 1000)
	b.SetBytes(int64(len(s)))
	for range b.N {
		collapse(s, MaxTextBytes)
	}
}
