package activities

import (
	"context"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/trawlerdev/trawler/internal/admit"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/frontier"
	"github.com/trawlerdev/trawler/internal/policy"
	"github.com/trawlerdev/trawler/internal/store"
)

// The frontier's inputs and results, as histories hold them.
type (
	StartCrawlInput  = frontier.StartCrawlInput
	StartCrawlResult = frontier.StartCrawlResult
	AbandonInput     = frontier.AbandonInput
)

// Frontier holds the short Postgres steps workflows run as local activities: the frontier
// stage (internal/frontier) and the control stage (internal/control, control.go), with
// Temporal's metrics.
type Frontier struct {
	Store        *store.Store
	Crawls       *policy.Crawls
	Admitter     *admit.Admitter
	ProcessQueue string // where unprocessed pages found by the sweep go
	RenderQueue  string // where the crawl's render runs go
}

// frontier is the frontier stage over this worker's stores, its gauges ctx's activity's.
func (f *Frontier) frontier(ctx context.Context) *frontier.Frontier {
	s := &frontier.Frontier{Store: f.Store.Crawls(), URLs: f.Store.Frontier(), Crawls: f.Crawls, ProcessQueue: f.ProcessQueue, RenderQueue: f.RenderQueue}
	if f.Admitter != nil {
		s.AdmitSeeds, s.Wake, s.Behind = f.Admitter.AdmitSeedsWakingLater, f.Admitter.Waker.Wake, f.Admitter.Backlog.Behind
	}
	if activity.IsActivity(ctx) {
		h := activity.GetMetricsHandler(ctx)
		s.Gauge = func(name string, v float64, tags map[string]string) { h.WithTags(tags).Gauge(name).Update(v) }
	}
	return s
}

// StartCrawl records the crawl (keeping an existing record) and admits the valid seeds.
func (f *Frontier) StartCrawl(ctx context.Context, in StartCrawlInput) (StartCrawlResult, error) {
	return f.frontier(ctx).StartCrawl(ctx, in)
}

// Progress reads a crawl's progress.
func (f *Frontier) Progress(ctx context.Context, crawlID string) (crawl.CrawlProgress, error) {
	return f.frontier(ctx).Progress(ctx, crawlID)
}

// SetCrawlState moves a crawl to running, paused, stopped or done.
func (f *Frontier) SetCrawlState(ctx context.Context, crawlID string, state crawl.CrawlState) error {
	return f.frontier(ctx).SetCrawlState(ctx, crawlID, state)
}

// WakeStale wakes hosts with due URLs that have not claimed for staleFor.
func (f *Frontier) WakeStale(ctx context.Context, crawlID string, staleFor time.Duration) (int, error) {
	return f.frontier(ctx).WakeStale(ctx, crawlID, staleFor)
}

// StaleFetched returns pages whose processing never finished, for the crawl to process again.
func (f *Frontier) StaleFetched(ctx context.Context, crawlID string, olderThan time.Duration) (crawl.ProcessInput, error) {
	return f.frontier(ctx).StaleFetched(ctx, crawlID, olderThan)
}

// TellLease tells the host's running fetch lease, through Postgres, that the host was paused
// or throttled: the lease beats at once and so receives the cancel (store.TellHostControl).
func (f *Frontier) TellLease(ctx context.Context, host string) error {
	return f.Store.Hosts().TellHostControl(ctx, host)
}

// Abandon returns an abandoned lease's claims to the queue.
func (f *Frontier) Abandon(ctx context.Context, in AbandonInput) error {
	return f.frontier(ctx).Abandon(ctx, in)
}
