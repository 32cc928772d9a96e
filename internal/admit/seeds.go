package admit

import (
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/policy"
	"github.com/trawlerdev/trawler/internal/store"
)

// given checks a URL given by hand (a seed, a submitted URL) and builds its candidate; why
// says what is wrong with it as a URL ("" if nothing). The crawl's rules are the caller's to
// apply.
func given(c *policy.Crawls, raw string, source crawl.Source) (cand store.Candidate, why string) {
	if why := crawl.CheckSeed(raw); why != "" {
		return cand, why
	}
	n, err := c.Norm.NormalizeRequest(raw)
	if err != nil {
		return cand, err.Error()
	}
	return c.Candidate(n, 0, 0, source), ""
}

// SeedCandidates checks and normalizes seed URLs; the refused ones come back with reasons.
func SeedCandidates(c *policy.Crawls, ci *policy.Crawl, seeds []string) ([]store.Candidate, []crawl.SeedError) {
	var cands []store.Candidate
	var invalid []crawl.SeedError
	for _, s := range seeds {
		cand, why := given(c, s, crawl.SourceSeed)
		if why == "" {
			if w := ci.Admissible(cand); w == policy.RejectDenied || w == policy.RejectScope || w == policy.RejectPort { // trap rules do not judge seeds
				why = w
			}
		}
		if why != "" {
			invalid = append(invalid, crawl.SeedError{Seed: s, Reason: why})
			continue
		}
		cands = append(cands, cand)
	}
	return cands, invalid
}

// CheckSeeds is SeedCandidates for a crawl not started yet (the CLI's check before it starts
// one): the seeds of spec (with its defaults) that its start would admit, and why the others
// would be refused.
func CheckSeeds(c *policy.Crawls, spec crawl.Spec) (good []string, invalid []crawl.SeedError) {
	_, invalid = SeedCandidates(c, c.Compile(spec.Name, spec), spec.Seeds)
	bad := map[string]bool{}
	for _, e := range invalid {
		bad[e.Seed] = true
	}
	for _, s := range spec.Seeds {
		if !bad[s] {
			good = append(good, s)
		}
	}
	return good, invalid
}
