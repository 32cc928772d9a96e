package processing

import (
	"fmt"
	"strings"
	"testing"

	"github.com/trawlerdev/trawler/internal/dedup"
	"github.com/trawlerdev/trawler/internal/store"
)

// The near-duplicate verdict is this stage's: among the candidates the store found, an
// original wins over a closer copy, the closest original wins among originals, and a
// candidate the detector does not match is never the verdict. Text too short to fingerprint
// asks for no detection at all.
func TestTheNearDuplicateVerdictPrefersTheClosestOriginal(t *testing.T) {
	det, err := dedup.NewDetector(3, 0.8)
	if err != nil {
		t.Fatal(err)
	}
	words := func(prefix string, n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "%s%d ", prefix, i*7919%1000)
		}
		return b.String()
	}
	base := words("word", 300)
	page := NearDup(det, base+"one")
	if page == nil || len(page.Keys) == 0 {
		t.Fatalf("a long text has no detection: %+v", page)
	}
	cand := func(hash, text string, original bool) store.NearCandidate {
		n := NearDup(det, text)
		return store.NearCandidate{Hash: []byte(hash), SimHash: n.SimHash, MinHash: n.MinHash, Original: original}
	}
	copyOf := cand("copy", base+"one", false) // identical text, but itself a duplicate
	orig := cand("orig", base+"two", true)    // near, an original
	other := cand("other", words("ship", 300), true)
	got := page.Judge([]store.NearCandidate{copyOf, other, orig})
	if got == nil || string(got.Of) != "orig" {
		t.Fatalf("verdict %+v, want the original", got)
	}
	if got := page.Judge([]store.NearCandidate{other}); got != nil {
		t.Errorf("an unrelated page was judged a near-duplicate: %+v", got)
	}
	if got := page.Judge([]store.NearCandidate{copyOf}); got == nil || string(got.Of) != "copy" {
		t.Errorf("a lone copy: %+v", got)
	}
	if n := NearDup(det, "too short"); n != nil {
		t.Errorf("a short text asks for detection: %+v", n)
	}
}
