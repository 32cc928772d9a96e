package dedup

import (
	"testing"
)

// Any text, however broken (invalid UTF-8, control bytes, enormous words), gives a fingerprint
// without panicking; the same text gives the same fingerprint and matches itself.
func FuzzFingerprint(f *testing.F) {
	for _, seed := range []string{"", "a b c", "The quick brown fox jumps over the lazy dog", "\xff\xfe\x00 word \x80",
		"ü ß 東京 の 天気 は 晴れ です 🙂 🙂 🙂", string(make([]byte, 300))} {
		f.Add(seed)
	}
	d, _ := NewDetector(3, 0.9)
	f.Fuzz(func(t *testing.T, text string) {
		a, b := d.Fingerprint(text), d.Fingerprint(text)
		if a.SimHash != b.SimHash || a.Shingles != b.Shingles {
			t.Fatalf("fingerprint of %q is not deterministic", text)
		}
		keys := len(d.Keys(a))
		if !a.Usable() {
			if keys != 0 {
				t.Fatalf("an unusable fingerprint has %d index keys", keys)
			}
			return
		}
		if m, ok := d.Compare(a, b); !ok || m.Kind != KindSimHash || m.Score != 0 || Jaccard(a.MinHash, b.MinHash) != 1 {
			t.Fatalf("a text does not match itself: %+v %v", m, ok)
		}
		if keys != SimHashBlocks+d.Banding().Bands {
			t.Fatalf("%d index keys", keys)
		}
	})
}
