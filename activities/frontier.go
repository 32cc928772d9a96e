package activities

import (
	"context"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/trawlerdev/trawler/internal/admit"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/failpoint"
	"github.com/trawlerdev/trawler/internal/metrics"
	"github.com/trawlerdev/trawler/internal/store"
)

// Frontier holds the short Postgres steps workflows run as local activities: starting a
// crawl, claiming and releasing URLs, progress, crawl state and the wake-up sweep.
type Frontier struct {
	Store        *store.Store
	Crawls       *admit.Crawls
	Admitter     *admit.Admitter
	ProcessQueue string // where unprocessed pages found by the sweep go
	RenderQueue  string // where the crawl's render runs go
}

// StartCrawlInput creates a crawl and admits its seeds.
type StartCrawlInput struct {
	CrawlID string     `json:"crawlId"`
	Spec    crawl.Spec `json:"spec"`
}

// StartCrawlResult says what became of the seeds.
type StartCrawlResult struct {
	Admitted int               `json:"admitted"`
	Hosts    int               `json:"hosts"`
	Invalid  []crawl.SeedError `json:"invalid,omitempty"`
	// ProcessQueue is where the crawl's processing and archiving activities run.
	ProcessQueue string `json:"processQueue,omitempty"`
	// RenderQueue is where its render runs go (spec.render).
	RenderQueue string `json:"renderQueue,omitempty"`
}

// StartCrawl records the crawl (keeping an existing record) and admits the valid seeds; the
// invalid ones come back with their reasons.
func (f *Frontier) StartCrawl(ctx context.Context, in StartCrawlInput) (StartCrawlResult, error) {
	out := StartCrawlResult{ProcessQueue: f.ProcessQueue, RenderQueue: f.RenderQueue}
	// The workflow applied the spec's defaults and checked it; the crawl is built from the
	// record the creation returns, not read back.
	spec, err := f.Store.CreateCrawl(ctx, in.CrawlID, in.Spec)
	if err != nil {
		return out, err
	}
	ci := f.Crawls.Put(in.CrawlID, spec)
	cands, invalid := f.Crawls.SeedCandidates(ci, in.Spec.Seeds)
	out.Invalid = invalid
	st, err := f.Admitter.AdmitSeeds(ctx, ci, cands)
	if err != nil {
		return out, err
	}
	out.Admitted, out.Hosts = st.New, st.Hosts
	return out, nil
}

// Progress reads a crawl's progress.
func (f *Frontier) Progress(ctx context.Context, crawlID string) (crawl.CrawlProgress, error) {
	p, err := f.Store.CrawlProgress(ctx, crawlID)
	if err != nil {
		return crawl.CrawlProgress{}, err
	}
	failpoint.Hit(failpoint.ProgressRead)
	if activity.IsActivity(ctx) {
		h := activity.GetMetricsHandler(ctx)
		for _, state := range []string{store.StateQueued, store.StateClaimed, store.StateFetched} {
			h.WithTags(map[string]string{"crawl": crawlID, "state": state}).Gauge(metrics.FrontierURLs).Update(float64(p.ByState[state]))
		}
		c := h.WithTags(map[string]string{"crawl": crawlID})
		c.Gauge(metrics.ExpiredClaims).Update(float64(p.Waiting.ExpiredClaims))
		c.Gauge(metrics.OldestUnprocessed).Update(p.Waiting.OldestFetchS)
		c.Gauge(metrics.OldestDue).Update(p.Waiting.OldestDueS)
	}
	p.UpdatedAt, p.PagesPerSec = time.Now(), p.AvgPagesPerSec()
	return p, nil
}

// SetCrawlState moves a crawl to running, paused, stopped or done.
func (f *Frontier) SetCrawlState(ctx context.Context, crawlID string, state crawl.CrawlState) error {
	return f.Store.SetCrawlState(ctx, crawlID, state)
}

// WakeStale wakes hosts with due URLs that have not claimed for staleFor: a host workflow that
// ended, or missed a signal. It returns how many it woke.
func (f *Frontier) WakeStale(ctx context.Context, crawlID string, staleFor time.Duration) (int, error) {
	if f.Admitter.Backlog.Behind(ctx) {
		return 0, nil // Temporal is behind: the next sweep wakes them
	}
	hosts, err := f.Store.StaleHosts(ctx, crawlID, time.Now().Add(-staleFor), 500)
	if err != nil || len(hosts) == 0 {
		return 0, err
	}
	ci, err := f.Crawls.Get(ctx, crawlID)
	if err != nil {
		return 0, err
	}
	return len(hosts), f.Admitter.Waker.Wake(ctx, crawlID, crawl.HostConfigFrom(ci.Spec), hosts)
}

// StaleFetched returns pages of a crawl fetched more than olderThan ago whose processing never
// finished, for the crawl to process again: a fetched page is never left behind.
func (f *Frontier) StaleFetched(ctx context.Context, crawlID string, olderThan time.Duration) (crawl.ProcessInput, error) {
	out := crawl.ProcessInput{Host: "reprocess", TaskQueue: f.ProcessQueue}
	pages, err := f.Store.StaleFetched(ctx, crawlID, time.Now().Add(-olderThan), 200)
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
	return f.Store.ReleaseOwned(ctx, in.Host, in.Owners)
}
