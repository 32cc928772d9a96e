package frontier

import (
	"context"
	"time"

	"github.com/trawlerdev/trawler/internal/admit"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/policy"
	"github.com/trawlerdev/trawler/internal/store"
)

// Store is what the frontier stage reads and writes in Postgres.
type Store interface {
	CreateCrawl(ctx context.Context, id string, spec crawl.Spec) (crawl.Spec, error)
	CrawlLive(ctx context.Context, id string) (exists, live bool, err error)
	CrawlProgress(ctx context.Context, id string) (crawl.CrawlProgress, error)
	SetCrawlState(ctx context.Context, id string, state crawl.CrawlState) error
	StaleHosts(ctx context.Context, crawlID string, before time.Time, limit int) ([]string, error)
}

// URLs is what the frontier stage reads and releases of the crawl's URLs (store.Frontier).
type URLs interface {
	StaleFetched(ctx context.Context, crawlID string, before time.Time, limit int) ([]store.FetchedPage, error)
	ReleaseOwned(ctx context.Context, host string, owners []string) error
}

// Gauge sets a gauge series with tags.
type Gauge func(name string, v float64, tags map[string]string)

// Frontier runs the frontier's steps.
type Frontier struct {
	Store  Store // crawls' rows (store.Crawls)
	URLs   URLs  // their URLs, for the sweeps (store.Frontier)
	Crawls *policy.Crawls
	// AdmitSeeds admits a crawl's seeds and wakes their hosts, in the background so that the
	// crawl's processing starts first (admit.Admitter.AdmitSeedsWakingLater).
	AdmitSeeds func(ctx context.Context, ci *policy.Crawl, cands []store.Candidate) (admit.AdmitStats, error)
	// Wake starts or signals the host workflows of a crawl's hosts (admit.Waker.Wake).
	Wake func(ctx context.Context, crawlID string, cfg crawl.HostConfig, hosts []string) error
	// Behind says Temporal is behind: the sweep wakes nobody then (nil: never behind).
	Behind       func(ctx context.Context) bool
	ProcessQueue string // where unprocessed pages found by the sweep go
	RenderQueue  string // where the crawl's render runs go
	Gauge        Gauge  // the frontier's gauges (nil: none)
	// Now is the clock the sweep's ages count on (nil: time.Now).
	Now func() time.Time
}

func (f *Frontier) now() time.Time {
	if f.Now != nil {
		return f.Now()
	}
	return time.Now()
}

func (f *Frontier) gauge(name string, v float64, tags map[string]string) {
	if f.Gauge != nil {
		f.Gauge(name, v, tags)
	}
}
