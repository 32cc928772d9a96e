package fetching

import (
	"context"
	"fmt"
	"time"

	"github.com/trawlerdev/trawler/internal/admit"
	"github.com/trawlerdev/trawler/internal/clock"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/fetch"
	"github.com/trawlerdev/trawler/internal/hooks"
	"github.com/trawlerdev/trawler/internal/metrics"
	"github.com/trawlerdev/trawler/internal/netguard"
	"github.com/trawlerdev/trawler/internal/pacing"
	"github.com/trawlerdev/trawler/internal/policy"
	"github.com/trawlerdev/trawler/internal/store"
)

// Frontier is what a lease reads and writes of its host's URLs (store.Frontier): it claims
// them a chunk at a time, gives back what it did not fetch, and reads their states.
type Frontier interface {
	ClaimAs(ctx context.Context, host, owner string, limit int, ttl time.Duration, now time.Time) ([]crawl.Claimed, *time.Time, error)
	ClaimInLease(ctx context.Context, host, owner string, owners []string, limit int, ttl time.Duration, now time.Time, soon time.Duration) (store.LeaseClaim, error)
	Release(ctx context.Context, claims []crawl.Claimed) error
	HostDue(ctx context.Context, host string, owners []string) (*time.Time, int, error)
	// The states of URLs a lease's window holds time for (its bookings: Stage.Schedule).
	WindowStates(ctx context.Context, urls []pacing.URLKey, epoch uint64) (map[string]pacing.WindowState, error)
}

// Fetches records each request's outcome (store.Fetches).
type Fetches interface {
	RecordFetch(ctx context.Context, host string, o store.FetchOutcome) (bool, error)
	RecordFetchGrouped(ctx context.Context, host string, o store.FetchOutcome) (bool, error)
}

// Hosts is what a lease reads and writes of its host other than its schedule (store.Hosts):
// robots.txt, health and retirement, sitemap discovery, a crawl's cookies for it.
type Hosts interface {
	HostRobotsAndHealth(ctx context.Context, host, scheme string) (*store.Robots, bool, error)
	SaveRobots(ctx context.Context, host, scheme string, r store.Robots, crawlDelay time.Duration) error
	StartSitemapDiscovery(ctx context.Context, crawlID, host string) (bool, error)
	HostFailing(ctx context.Context, host, reason string) error
	HostHealthy(ctx context.Context, host string) error
	RetireIfDead(ctx context.Context, host string, after time.Duration) (bool, error)
	CookieJar(ctx context.Context, crawlID, host string) ([]store.SetCookie, error)
	SaveCookies(ctx context.Context, crawlID, host string, cookies []store.SetCookie) error
}

// Payloads finds stored bodies by digest (spec.dedupAgainst; store.Documents).
type Payloads interface {
	FindPayload(ctx context.Context, crawlID string, from []string, hash []byte) (store.Payload, bool, error)
}

// Hooks are told of a lease's progress (nil: not told).
type Hooks struct {
	Beat  func(LeaseBeat)                    // the lease's progress: a heartbeat
	Count hooks.Counter                      // a metric series
	Time  func(name string, d time.Duration) // a timer series
	Log   hooks.Logger
}

func (h Hooks) beat(r LeaseBeat) {
	if h.Beat != nil {
		h.Beat(r)
	}
}

func (h Hooks) time(name string, d time.Duration) {
	if h.Time != nil {
		h.Time(name, d)
	}
}

func (h Hooks) log() hooks.Logger { return hooks.Log(h.Log) }

// Stage runs fetch leases: each fetches one host's URLs, spacing request starts by the host's
// delay, and stores bodies and outcomes.
type Stage struct {
	Frontier Frontier
	Fetches  Fetches
	Hosts    Hosts
	Payloads Payloads
	// Clock is the clock the store converts bookings with (zero: the machine's).
	Clock  clock.Clock
	Client *fetch.Client
	Crawls *policy.Crawls
	// Admit admits what a redirect or a sitemap discovered (the one admission path).
	Admit func(ctx context.Context, ci *policy.Crawl, d *admit.Discovery) (admit.AdmitStats, error)
	// StoreBody stores a body and returns its reference and the wait for it to be stored.
	StoreBody func(ctx context.Context, crawlID string, body []byte) (string, func(context.Context) error, error)
	// Flush stores the bodies waiting in the current segment at once (nil: none wait).
	Flush func()
	// Dialer judges a host's addresses (nil: every address may be dialed).
	Dialer *netguard.Dialer
	// Control tells of crawl controls (pause, stop, block) as they commit, so the URL states
	// a window of requests read stay good until one comes (nil: every request reads them).
	Control *store.ControlWatch
	// Schedule books the host's request time (and its address's, per-IP politeness): the
	// one owner of a host's schedule.
	Schedule *pacing.Schedule
	// Stopping is closed when this worker begins to stop: a running lease ends early (as if
	// its time were up), so the host's next lease starts on a live worker at once.
	Stopping <-chan struct{}
	// BeatEvery is the worker's heartbeat throttle (TRAWLER_HEARTBEAT_MAX): a lease beats that
	// often when it is under crawl.HeartbeatEvery (a test's fast setting: a pause or throttle
	// reaches a running lease in a heartbeat's response), else every crawl.LeaseBeatEvery.
	BeatEvery time.Duration
	Hooks     Hooks
}

// beatEvery is how often a lease beats (BeatEvery).
func (f *Stage) beatEvery() time.Duration {
	if f.BeatEvery > 0 && f.BeatEvery < crawl.HeartbeatEvery {
		return f.BeatEvery
	}
	return crawl.LeaseBeatEvery
}

// clock is the worker's clock: the one its store converts the host's bookings with (the
// machine's, unless a test sets it off).
func (f *Stage) clock() clock.Clock {
	if f == nil { // a lease's pure parts under unit test
		return clock.Clock{}
	}
	return f.Clock
}

// observe records one request's outcome in the fetch series.
func (f *Stage) observe(o store.FetchOutcome) {
	if o.SkipReason == "blocked address" {
		f.Hooks.Count.Add(metrics.Refused, 1)
		return
	}
	class := "error"
	if o.Status > 0 {
		class = fmt.Sprintf("%dxx", o.Status/100)
	}
	f.Hooks.Count.Add(metrics.Fetches, 1, "status_class", class)
	f.Hooks.Count.Add(metrics.FetchBytes, o.Bytes)
	if o.Status == 304 {
		f.Hooks.Count.Add(metrics.NotModified, 1)
	}
	if o.Status > 0 || o.Err != "" {
		f.Hooks.time(metrics.FetchLatency, o.Duration)
	}
	switch {
	case o.State == crawl.URLDead:
		f.Hooks.Count.Add(metrics.DeadLetters, 1)
	case o.Err != "" && o.State == crawl.URLQueued:
		f.Hooks.Count.Add(metrics.Retries, 1)
	}
}
