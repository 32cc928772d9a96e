package dedup

import (
	"fmt"
	"slices"
)

// Detector kinds, as recorded on a near-duplicate document (an exact duplicate is the store's
// verdict by content hash: store.DupExact).
const (
	KindSimHash = "simhash"
	KindMinHash = "minhash"
)

// Detector holds the near-duplicate settings and the signer they imply.
type Detector struct {
	MaxDistance int     // SimHash: at most this many bits apart (≤ MaxSimHashDistance)
	Threshold   float64 // MinHash: estimated Jaccard at least this
	banding     Banding
	minhash     *MinHash
}

// DefaultHashes is the MinHash signature length: what a Jaccard estimate is made of (its
// standard error at 0.85 is 0.03). BandHashes of them, the first, make the index's bands.
const (
	DefaultHashes = 128
	BandHashes    = 80
)

// Short texts: what tells a near-duplicate from another text is how many shingles differ, not
// what fraction. An edited sentence or a changed ad line changes about 20 shingles on each
// side whatever the text's length, which takes a 300-word article's Jaccard to about 0.86 and
// a 2,000-word page's to 0.98. So a pair is judged against a threshold that allows
// EditShingles differing shingles on each side of the larger text, (n−k)/(n+k), never below
// ShortJaccard nor above the configured threshold: long texts keep the configured threshold,
// short ones get the edit budget. Texts sharing two paragraphs of five (a follow-up story on
// the same template) stay near a Jaccard of 0.25, far below.
const (
	EditShingles = 40
	ShortJaccard = 0.75
)

// NewDetector checks the settings: maxDistance in 0…3 (what the block index guarantees to
// find), threshold in (0, 1]. Its MinHash bands find pairs down to the short-text threshold
// with high probability (16 bands of 5 rows: 0.997 at a Jaccard of 0.79, 0.987 at 0.75), at
// 16 index keys a document besides SimHash's 4.
func NewDetector(maxDistance int, threshold float64) (*Detector, error) {
	if maxDistance < 0 || maxDistance > MaxSimHashDistance {
		return nil, fmt.Errorf("dedup: SimHash distance %d outside 0…%d", maxDistance, MaxSimHashDistance)
	}
	if threshold <= 0 || threshold > 1 {
		return nil, fmt.Errorf("dedup: Jaccard threshold %v outside (0, 1]", threshold)
	}
	b, err := BandingFor(BandHashes, min(threshold, ShortJaccard)-0.1)
	if err != nil {
		return nil, err
	}
	return &Detector{MaxDistance: maxDistance, Threshold: threshold, banding: b, minhash: NewMinHash(DefaultHashes)}, nil
}

// Banding is the LSH layout in use.
func (d *Detector) Banding() Banding { return d.banding }

// Fingerprint is what near-duplicate detection keeps of a document.
type Fingerprint struct {
	SimHash  uint64
	MinHash  []uint32
	Shingles int // distinct shingles; below MinShingles the document takes no part
}

// Usable reports whether the fingerprint carries enough text for a verdict.
func (f Fingerprint) Usable() bool { return f.Shingles >= MinShingles }

// Fingerprint computes a text's fingerprint.
func (d *Detector) Fingerprint(text string) Fingerprint {
	sh := Shingles(text)
	if len(sh) < MinShingles {
		return Fingerprint{Shingles: len(sh)}
	}
	return Fingerprint{SimHash: SimHash(sh), MinHash: d.minhash.Signature(sh), Shingles: len(sh)}
}

// Keys are the index keys to look candidates up by, and to file the document under: one per
// SimHash block, one per MinHash band.
func (d *Detector) Keys(f Fingerprint) []int64 {
	if !f.Usable() {
		return nil
	}
	return append(SimHashKeys(f.SimHash), d.banding.Keys(f.MinHash)...)
}

// Match is a verdict that a document near-duplicates another.
type Match struct {
	Kind  string  // KindSimHash or KindMinHash
	Score float64 // Hamming distance for SimHash, estimated Jaccard for MinHash
}

// Compare judges a candidate: SimHash first (the cheaper, stricter test), then MinHash.
func (d *Detector) Compare(a, b Fingerprint) (Match, bool) {
	if !a.Usable() || !b.Usable() {
		return Match{}, false
	}
	if dist := Hamming(a.SimHash, b.SimHash); dist <= d.MaxDistance {
		return Match{Kind: KindSimHash, Score: float64(dist)}, true
	}
	if j := Jaccard(a.MinHash, b.MinHash); j >= d.ThresholdFor(max(a.Shingles, b.Shingles)) {
		return Match{Kind: KindMinHash, Score: j}, true
	}
	return Match{}, false
}

// ThresholdFor is the Jaccard a pair whose larger text has n distinct shingles must reach:
// the configured threshold, lowered for short texts to allow EditShingles differing
// shingles on each side, never below ShortJaccard (nor the configured threshold, if lower).
func (d *Detector) ThresholdFor(n int) float64 {
	budget := float64(n-EditShingles) / float64(n+EditShingles)
	return min(d.Threshold, max(budget, ShortJaccard))
}

// Better reports whether match m beats match o as the one to record: any SimHash match beats
// MinHash (fewer bits apart first), a higher Jaccard beats a lower.
func (m Match) Better(o Match) bool {
	if m.Kind != o.Kind {
		return m.Kind == KindSimHash
	}
	if m.Kind == KindSimHash {
		return m.Score < o.Score
	}
	return m.Score > o.Score
}

// Index is an in-memory near-duplicate index over the same keys a persistent store uses: a
// lookup probes each key, never the whole corpus. Under a SimHash block, only documents
// within MaxDistance are candidates, as the store checks in its index: a block finds SimHash
// matches (any document shares a given block with one in 65,536 by chance), the bands find
// MinHash matches.
type Index struct {
	d    *Detector
	keys map[int64][]int
	fps  []Fingerprint
}

// NewIndex returns an empty index for detector d.
func NewIndex(d *Detector) *Index { return &Index{d: d, keys: map[int64][]int{}} }

// Lookup returns the best match among indexed documents, with its number (the order of Add).
func (x *Index) Lookup(f Fingerprint) (id int, m Match, ok bool) {
	id = -1
	tried := map[int]bool{}
	blocks := SimHashKeys(f.SimHash)
	for _, k := range x.d.Keys(f) {
		block := slices.Contains(blocks, k)
		for _, c := range x.keys[k] {
			if tried[c] || (block && Hamming(f.SimHash, x.fps[c].SimHash) > x.d.MaxDistance) {
				continue
			}
			tried[c] = true
			if cm, hit := x.d.Compare(f, x.fps[c]); hit && (!ok || cm.Better(m) || (!m.Better(cm) && c < id)) {
				id, m, ok = c, cm, true
			}
		}
	}
	return id, m, ok
}

// Add files a fingerprint and returns its number.
func (x *Index) Add(f Fingerprint) int {
	id := len(x.fps)
	x.fps = append(x.fps, f)
	for _, k := range x.d.Keys(f) {
		x.keys[k] = append(x.keys[k], id)
	}
	return id
}
