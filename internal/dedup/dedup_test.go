package dedup

import (
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/trawlerdev/trawler/internal/parse"
	"github.com/trawlerdev/trawler/internal/testweb"
)

func TestShinglesNormaliseWords(t *testing.T) {
	a := Shingles("The quick, brown fox -- jumps over the lazy dog.")
	b := Shingles("the QUICK brown\n\tfox jumps over the lazy dog")
	if len(a) != 7 || len(a) != len(b) {
		t.Fatalf("got %d and %d shingles, want 7", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("shingle %d differs: punctuation and case should not matter", i)
		}
	}
	if got := Shingles("a b"); len(got) != 0 {
		t.Errorf("two words gave %d shingles", len(got))
	}
	if got := Shingles("x y z " + strings.Repeat("é", 100) + " w"); len(got) != 2 { // xyz, yzw
		t.Errorf("an over-long word should be skipped, got %d shingles", len(got))
	}
}

func TestSimHashBlockIndexFindsEveryFingerprintWithinThreeBits(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		a := r.Uint64()
		b := a
		for flips := r.IntN(4); flips > 0; flips-- {
			b ^= 1 << r.IntN(64)
		}
		ka, kb := SimHashKeys(a), SimHashKeys(b)
		shared := false
		for j := range ka {
			shared = shared || ka[j] == kb[j]
		}
		if !shared {
			t.Fatalf("%016x and %016x are %d bits apart but share no block key", a, b, Hamming(a, b))
		}
	}
	if SimHashKeys(0xffff)[0] == SimHashKeys(0xffff << 16)[1] {
		t.Error("equal block values of different blocks must be different keys")
	}
}

func TestMinHashEstimatesJaccard(t *testing.T) {
	m := NewMinHash(256)
	r := rand.New(rand.NewPCG(3, 4))
	common := make([]uint64, 800)
	for i := range common {
		common[i] = r.Uint64()
	}
	onlyA, onlyB := []uint64{}, []uint64{}
	for i := 0; i < 100; i++ {
		onlyA, onlyB = append(onlyA, r.Uint64()), append(onlyB, r.Uint64())
	}
	a, b := append(append([]uint64{}, common...), onlyA...), append(append([]uint64{}, common...), onlyB...)
	want := 800.0 / 1000.0
	if got := Jaccard(m.Signature(a), m.Signature(b)); got < want-0.08 || got > want+0.08 {
		t.Errorf("estimated Jaccard %.3f, true %.3f", got, want)
	}
	if got := Jaccard(m.Signature(a), m.Signature(a)); got != 1 {
		t.Errorf("a set against itself: %.3f", got)
	}
	sig := m.Signature(a)
	if back := DecodeSignature(EncodeSignature(sig)); Jaccard(sig, back) != 1 || len(back) != 256 {
		t.Error("signature does not survive encoding")
	}
}

func TestBandingTurnsBelowThreshold(t *testing.T) {
	for _, th := range []float64{0.5, 0.8, 0.9, 0.95} {
		b, err := BandingFor(128, th)
		if err != nil || b.Bands*b.Rows > 128 || b.Bands < 1 {
			t.Fatalf("threshold %v: %+v %v", th, b, err)
		}
		// Probability that a pair at exactly the threshold shares a band.
		p := 1 - pow(1-pow(th, b.Rows), b.Bands)
		if p < 0.85 {
			t.Errorf("threshold %v: banding %+v finds a pair at the threshold with p=%.2f", th, b, p)
		}
	}
	if _, err := NewDetector(4, 0.9); err == nil {
		t.Error("distance 4 is beyond what the block index can find")
	}
	if _, err := NewDetector(3, 0); err == nil {
		t.Error("threshold 0 accepted")
	}
}

func pow(x float64, n int) float64 {
	out := 1.0
	for ; n > 0; n-- {
		out *= x
	}
	return out
}

func TestShortTextsTakeNoPart(t *testing.T) {
	d, _ := NewDetector(3, 0.9)
	a, b := d.Fingerprint("Page not found."), d.Fingerprint("Page not found.")
	if a.Usable() || len(d.Keys(a)) != 0 {
		t.Fatal("a three-word page has a usable fingerprint")
	}
	if _, ok := d.Compare(a, b); ok {
		t.Error("short pages matched")
	}
}

// score is precision and recall of sequential lookups against labelled clusters: each
// document is looked up among those before it, then added.
type score struct{ tp, fp, fn, bySim, byMin int }

func (s score) precision() float64 {
	if s.tp+s.fp == 0 {
		return 1
	}
	return float64(s.tp) / float64(s.tp+s.fp)
}

func (s score) recall() float64 {
	if s.tp+s.fn == 0 {
		return 1
	}
	return float64(s.tp) / float64(s.tp+s.fn)
}

func evaluate(d *Detector, texts []string, cluster []int) score {
	var s score
	idx := NewIndex(d)
	seen := map[int]bool{}
	for i, text := range texts {
		fp := d.Fingerprint(text)
		id, m, ok := idx.Lookup(fp)
		hasMate := seen[cluster[i]]
		switch {
		case ok && cluster[id] == cluster[i]:
			s.tp++
			if m.Kind == KindSimHash {
				s.bySim++
			} else {
				s.byMin++
			}
		case ok:
			s.fp++
		case hasMate:
			s.fn++
		}
		seen[cluster[i]] = true
		idx.Add(fp)
	}
	return s
}

func TestNearDuplicatesOnGeneratedCorpus(t *testing.T) {
	docs := GenerateCorpus(42, 10000)
	texts, cluster := make([]string, len(docs)), make([]int, len(docs))
	for i, d := range docs {
		texts[i], cluster[i] = d.Text, d.Cluster
	}
	d, _ := NewDetector(3, 0.9)
	s := evaluate(d, texts, cluster)
	t.Logf("10,000 documents: precision %.4f recall %.4f (tp %d fp %d fn %d; %d by SimHash, %d by MinHash only)",
		s.precision(), s.recall(), s.tp, s.fp, s.fn, s.bySim, s.byMin)
	if s.precision() < 0.95 || s.recall() < 0.90 || s.tp < 3000 {
		t.Errorf("precision %.4f (want ≥ 0.95), recall %.4f (want ≥ 0.90)", s.precision(), s.recall())
	}
}

func TestNearDuplicatesOnTestWebClusters(t *testing.T) {
	web, err := testweb.New(testweb.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	truth := web.Truth(web.Seeds())
	cluster := map[string]int{}
	for i, c := range truth.Clusters {
		for _, u := range c.URLs {
			cluster[u] = i
		}
	}
	// Every page of the test web takes part: pages outside a cluster are their own, so a
	// template shared across a site must not make its pages duplicates.
	var texts []string
	var labels []int
	for i, u := range truth.Pages {
		text := pageText(t, web, u)
		if text == "" {
			continue
		}
		label, ok := cluster[u]
		if !ok {
			label = len(truth.Clusters) + i
		}
		texts, labels = append(texts, text), append(labels, label)
	}
	d, _ := NewDetector(3, 0.9)
	s := evaluate(d, texts, labels)
	t.Logf("%d test-web pages, %d clusters: precision %.3f recall %.3f (tp %d fp %d fn %d; %d by SimHash, %d by MinHash only)",
		len(texts), len(truth.Clusters), s.precision(), s.recall(), s.tp, s.fp, s.fn, s.bySim, s.byMin)
	if s.precision() < 0.95 || s.recall() < 0.90 || s.tp < 8 {
		t.Errorf("precision %.3f (want ≥ 0.95), recall %.3f (want ≥ 0.90), %d true matches", s.precision(), s.recall(), s.tp)
	}
}

func pageText(t *testing.T, web *testweb.Web, raw string) string {
	t.Helper()
	u, _ := url.Parse(raw)
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, raw, nil)
	req.Header.Set("User-Agent", "TrawlerBot/test")
	web.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		return ""
	}
	p, err := parse.Parse(rec.Body.Bytes(), rec.Header().Get("Content-Type"), u, 1000, 0, "trawlerbot")
	if err != nil || p.Binary {
		return ""
	}
	return p.Text
}

func BenchmarkFingerprint(b *testing.B) {
	docs := GenerateCorpus(7, 200)
	d, _ := NewDetector(3, 0.9)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d.Fingerprint(docs[i%len(docs)].Text)
	}
}

// BenchmarkLookup10k is the in-memory index's lookup over a 10,000-document corpus.
func BenchmarkLookup10k(b *testing.B) {
	docs := GenerateCorpus(7, 10000)
	d, _ := NewDetector(3, 0.9)
	idx := NewIndex(d)
	fps := make([]Fingerprint, len(docs))
	for i, doc := range docs {
		fps[i] = d.Fingerprint(doc.Text)
		idx.Add(fps[i])
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		idx.Lookup(fps[i%len(fps)])
	}
}

// simHashByVotes is the textbook SimHash (a vote per bit per shingle), the reference the
// bit-sliced SimHash must agree with.
func simHashByVotes(shingles []uint64) uint64 {
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

func TestSimHashAgreesWithVoting(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 253, 254, 255, 256, 509, 510, 511, 1000, 5000} {
		for trial := 0; trial < 20; trial++ {
			sh := make([]uint64, n)
			for i := range sh {
				sh[i] = r.Uint64()
				if trial%4 == 0 {
					sh[i] |= 0xff00ff00ff00ff00 // lanes that count every shingle: overflow if a flush is missed
				}
			}
			if got, want := SimHash(sh), simHashByVotes(sh); got != want {
				t.Fatalf("n=%d trial %d: %016x, voting says %016x", n, trial, got, want)
			}
		}
	}
}

// Short news articles: one edited sentence moves a 300-word text's shingle Jaccard well below
// 0.9, so a fixed threshold misses it. Every variant (dateline, ad line, one sentence, exact
// copy) must match its original, and no follow-up or unrelated story on the same template.
func TestNearDuplicatesOnShortArticles(t *testing.T) {
	docs := GenerateArticles(7, 300)
	texts, cluster := make([]string, len(docs)), make([]int, len(docs))
	for i, d := range docs {
		texts[i], cluster[i] = d.Text, d.Cluster
	}
	d, _ := NewDetector(3, 0.9)
	s := evaluate(d, texts, cluster)
	t.Logf("%d short articles, 300 clusters: precision %.4f recall %.4f (tp %d fp %d fn %d; %d by SimHash, %d by MinHash only)",
		len(docs), s.precision(), s.recall(), s.tp, s.fp, s.fn, s.bySim, s.byMin)
	missed := map[string]int{}
	idx := NewIndex(d)
	for i, text := range texts {
		fp := d.Fingerprint(text)
		if id, _, ok := idx.Lookup(fp); docs[i].Variant != "original" && docs[i].Cluster != i && (!ok || cluster[id] != cluster[i]) {
			missed[docs[i].Variant]++
		}
		idx.Add(fp)
	}
	t.Logf("missed by variant: %v", missed)
	if s.precision() < 0.98 || s.recall() < 0.95 {
		t.Errorf("precision %.4f (want ≥ 0.98), recall %.4f (want ≥ 0.95)", s.precision(), s.recall())
	}
}

// The threshold allows a fixed budget of differing shingles: short texts get a lower one,
// long texts keep the configured threshold, and none goes below ShortJaccard.
func TestThresholdFollowsLength(t *testing.T) {
	d, _ := NewDetector(3, 0.9)
	for n, want := range map[int]float64{20: ShortJaccard, 200: ShortJaccard, 300: 260.0 / 340, 500: 460.0 / 540, 2000: 0.9} {
		if got := d.ThresholdFor(n); math.Abs(got-want) > 1e-9 {
			t.Errorf("%d shingles: %.4f, want %.4f", n, got, want)
		}
	}
	strict, _ := NewDetector(3, 0.6)
	if got := strict.ThresholdFor(300); got != 0.6 {
		t.Errorf("a configured threshold below the short-text floor stands: %.4f", got)
	}
	if b := d.Banding(); b.Bands != 16 || b.Rows != 5 {
		t.Errorf("banding %+v, want 16 bands of 5 rows", b)
	}
}

// Signature is the per-hash minimum over the shingles whatever the loop order: the stored
// signatures of earlier crawls must keep matching new ones (a reference loop, shingle by
// shingle, on random sets of several sizes, with signers whose length is not a multiple of
// the four hashes Signature takes at a time).
func TestSignatureIsTheMinimumOfEachHash(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct{ hashes, n int }{{64, 0}, {64, 1}, {64, 7}, {64, 500}, {DefaultHashes, 300}, {130, 40}, {3, 9}} {
		m, n := NewMinHash(c.hashes), c.n
		shingles := make([]uint64, n)
		for i := range shingles {
			shingles[i] = rng.Uint64()
		}
		want := make([]uint32, len(m.seeds))
		for i := range want {
			want[i] = math.MaxUint32
		}
		for _, s := range shingles {
			for i, seed := range m.seeds {
				if h := uint32(mix(s ^ seed)); h < want[i] {
					want[i] = h
				}
			}
		}
		if got := m.Signature(shingles); !slices.Equal(got, want) {
			t.Fatalf("%d hashes, %d shingles: signature differs from the per-hash minima", c.hashes, n)
		}
	}
}

// BenchmarkSignature is a MinHash signature of a page's shingles (500, a short article's).
func BenchmarkSignature(b *testing.B) {
	m := NewMinHash(DefaultHashes)
	sh := make([]uint64, 500)
	for i := range sh {
		sh[i] = mix(uint64(i))
	}
	b.ResetTimer()
	for range b.N {
		m.Signature(sh)
	}
}
