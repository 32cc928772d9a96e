package processing

import (
	"github.com/trawlerdev/trawler/internal/dedup"
	"github.com/trawlerdev/trawler/internal/store"
)

// NearDup is a page's near-duplicate detection under its crawl's detector, as the store's
// save asks for it (nil: the text is too short to fingerprint). The verdict is this stage's:
// the store finds the candidates the keys file under its locks, and Judge picks among them.
func NearDup(det *dedup.Detector, text string) *store.NearDup {
	fp := det.Fingerprint(text)
	if !fp.Usable() {
		return nil
	}
	return &store.NearDup{SimHash: int64(fp.SimHash), MinHash: dedup.EncodeSignature(fp.MinHash), Keys: det.Keys(fp),
		Blocks: dedup.SimHashKeys(fp.SimHash), MaxBits: det.MaxDistance,
		Judge: func(cands []store.NearCandidate) *store.Dup { return bestNearDuplicate(det, fp, cands) }}
}

// bestNearDuplicate is the detector's best match for fp among the candidates: an original
// before a duplicate (a page is filed as a duplicate of the first of its kind, not of a copy),
// then the closest, then the first.
func bestNearDuplicate(det *dedup.Detector, fp dedup.Fingerprint, cands []store.NearCandidate) *store.Dup {
	var best *store.Dup
	var bestMatch dedup.Match
	bestOriginal := false
	for _, c := range cands {
		other := dedup.Fingerprint{SimHash: uint64(c.SimHash), MinHash: dedup.DecodeSignature(c.MinHash), Shingles: dedup.MinShingles}
		m, ok := det.Compare(fp, other)
		if !ok {
			continue
		}
		if best == nil || (c.Original && !bestOriginal) || (c.Original == bestOriginal && m.Better(bestMatch)) {
			best, bestMatch, bestOriginal = &store.Dup{Of: c.Hash, Kind: m.Kind, Score: m.Score}, m, c.Original
		}
	}
	return best
}
