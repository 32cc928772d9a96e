package rendering

import (
	"context"
	"time"

	"github.com/trawlerdev/trawler/internal/admit"
	"github.com/trawlerdev/trawler/internal/clock"
	"github.com/trawlerdev/trawler/internal/fetch"
	"github.com/trawlerdev/trawler/internal/hooks"
	"github.com/trawlerdev/trawler/internal/pacing"
	"github.com/trawlerdev/trawler/internal/policy"
	"github.com/trawlerdev/trawler/internal/render"
	"github.com/trawlerdev/trawler/internal/store"
)

// Store is what the render stage reads and writes in Postgres.
type Store interface {
	// The crawl's render queue.
	ClaimRenders(ctx context.Context, crawlID, owner string, limit int, hold time.Duration) ([]store.RenderJob, error)
	FinishRender(ctx context.Context, j store.RenderJob, owner string, o store.RenderOutcome) error
	ReleaseRender(ctx context.Context, j store.RenderJob, owner string) error
}

// Hosts is what the render stage reads of a host: its rules and pace, shared with its fetch
// leases (store.Hosts).
type Hosts interface {
	HostRobots(ctx context.Context, host, scheme string) (*store.Robots, error)
	HostCrawlDelay(ctx context.Context, host string) (time.Duration, error)
}

// Browser renders pages (render.Browser in a worker).
type Browser interface {
	Render(ctx context.Context, pageURL string, policy render.Policy) (*render.Result, error)
	Concurrency() int // pages rendered at once at most
}

// Hooks are told of a render run's progress (nil: not told).
type Hooks struct {
	Beat func(Result) // the run's progress: a heartbeat
	Log  hooks.Logger
}

func (h Hooks) beat(r Result) {
	if h.Beat != nil {
		h.Beat(r)
	}
}

func (h Hooks) log() hooks.Logger { return hooks.Log(h.Log) }

// Stage renders the pages crawls ask for (spec.render) and admits the links of the rendered DOM.
type Stage struct {
	Store   Store       // the crawl's render queue (store.Renders)
	Hosts   Hosts       // the hosts' robots.txt and Crawl-delay
	Clock   clock.Clock // the clock the store converts bookings with
	Browser Browser
	Crawls  *policy.Crawls
	// Admit admits the rendered DOM's links (the one admission path).
	Admit func(ctx context.Context, ci *policy.Crawl, d *admit.Discovery) (admit.AdmitStats, error)
	// Body reads a page's capture by reference, limit bytes at most.
	Body func(ctx context.Context, key string, limit int64) ([]byte, error)
	// StoreDOM stores a rendered DOM and returns its reference and the wait for it to be stored.
	StoreDOM func(ctx context.Context, crawlID string, dom []byte) (string, func(context.Context) error, error)
	Client   *fetch.Client    // for the pages' own subresources
	Schedule *pacing.Schedule // books those requests on the host's schedule, as fetch leases do
	// Stopping is closed when this worker begins to stop: a run ends (the crawl starts another
	// on a live worker).
	Stopping <-chan struct{}
	Hooks    Hooks
}

// Run is one render run of a crawl: it claims and renders the crawl's queued pages under
// Owner for up to For, and ends sooner when none are left for a while.
type Run struct {
	CrawlID string        `json:"crawlId"`
	Owner   string        `json:"owner"`
	For     time.Duration `json:"for"`
}

// Result counts what a render run did.
type Result struct {
	Rendered int `json:"rendered"`
	Failed   int `json:"failed"`
	Admitted int `json:"admitted"`
	// BrowserRestarts counts the browser's deaths (each gives its pages back uncounted).
	BrowserRestarts int `json:"browserRestarts,omitempty"`
}
