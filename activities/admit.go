package activities

import (
	"context"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/seen"
	"github.com/trawlerdev/trawler/internal/store"
)

// Admitter puts candidate URLs into a crawl's frontier and wakes the hosts that got new ones.
type Admitter struct {
	Store *store.Store
	Waker *Waker
	Seen  *seen.Filter // nil: every candidate goes to Postgres
}

// AdmitStats is what an admission did.
type AdmitStats struct {
	New        int `json:"new"`
	Duplicates int `json:"duplicates"`
	OverBudget int `json:"overBudget"`
	BloomSkips int `json:"bloomSkips"`
	Hosts      int `json:"hosts"`
}

func (a *Admitter) admit(ctx context.Context, ci *crawlInfo, cands []store.Candidate) (AdmitStats, error) {
	var st AdmitStats
	keep := cands[:0:0]
	for _, c := range cands {
		if a.Seen.Skip(ci.id, c.Hash) {
			st.BloomSkips++
			continue
		}
		keep = append(keep, c)
	}
	res, err := a.Store.Admit(ctx, ci.id, keep)
	if err != nil {
		return st, err
	}
	hashes := make([][]byte, len(keep))
	for i, c := range keep {
		hashes[i] = c.Hash
	}
	a.Seen.Add(ci.id, hashes)
	st.Duplicates, st.OverBudget = res.Duplicates, res.OverBudget
	for _, n := range res.New {
		st.New += n
	}
	st.Hosts = len(res.New)
	// Only hosts waiting for work are signalled: a busy one claims the new URLs after its
	// batch. This is most of what admission used to cost in workflow history.
	if len(res.Wake) > 0 {
		if err := a.Waker.Wake(ctx, ci.id, crawl.HostConfigFrom(ci.spec), res.Wake); err != nil {
			// The URLs are safe in Postgres, and the crawl's sweep wakes hosts that missed a
			// signal; failing here would only admit the same URLs again.
			loggerFor(ctx).Warn("waking hosts failed; the crawl sweep will retry", "crawl", ci.id, "error", err)
		}
	}
	return st, nil
}
