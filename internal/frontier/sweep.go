package frontier

import (
	"context"
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/store"
)

// The sweep's bites: at most this many hosts woken, or pages handed back, per sweep.
const (
	sweepHosts = 500
	sweepPages = 200
)

// WakeStale wakes hosts with due URLs that have not claimed for staleFor: a host workflow that
// ended, or missed a signal. It returns how many it woke.
func (f *Frontier) WakeStale(ctx context.Context, crawlID string, staleFor time.Duration) (int, error) {
	if f.Behind != nil && f.Behind(ctx) {
		return 0, nil // Temporal is behind: the next sweep wakes them
	}
	hosts, err := f.Store.StaleHosts(ctx, crawlID, f.now().Add(-staleFor), sweepHosts)
	if err != nil || len(hosts) == 0 {
		return 0, err
	}
	ci, err := f.Crawls.Get(ctx, crawlID)
	if err != nil {
		return 0, err
	}
	return len(hosts), f.Wake(ctx, crawlID, crawl.HostConfigFrom(ci.Spec), hosts)
}

// StaleFetched returns pages of a crawl fetched more than olderThan ago whose processing never
// finished, for the crawl to process again: a fetched page is never left behind.
func (f *Frontier) StaleFetched(ctx context.Context, crawlID string, olderThan time.Duration) (crawl.ProcessInput, error) {
	out := crawl.ProcessInput{Host: "reprocess", TaskQueue: f.ProcessQueue}
	pages, err := f.URLs.StaleFetched(ctx, crawlID, f.now().Add(-olderThan), sweepPages)
	out.Pages = store.PageRefs(pages)
	return out, err
}

// AbandonInput is a fetch lease that was cancelled or failed for good: the owners its claims
// were made under (crawl.LeaseOwners).
type AbandonInput struct {
	Host   string   `json:"host"`
	Owners []string `json:"owners"`
}

// Abandon returns an abandoned lease's claims to the queue. The pages it fetched stay fetched
// for the crawl's processing.
func (f *Frontier) Abandon(ctx context.Context, in AbandonInput) error {
	return f.URLs.ReleaseOwned(ctx, in.Host, in.Owners)
}
