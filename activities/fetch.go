package activities

import (
	"context"
	"errors"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/trawlerdev/trawler/internal/admit"
	"github.com/trawlerdev/trawler/internal/blob"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/fetch"
	"github.com/trawlerdev/trawler/internal/fetching"
	"github.com/trawlerdev/trawler/internal/netguard"
	"github.com/trawlerdev/trawler/internal/pacing"
	"github.com/trawlerdev/trawler/internal/policy"
	"github.com/trawlerdev/trawler/internal/segment"
	"github.com/trawlerdev/trawler/internal/store"
)

// FetchLeaseInput and FetchLeaseResult are a fetch lease's input and result, as histories hold
// them; the result is the UI's view and what the host workflow decides on.
type (
	FetchLeaseInput    = fetching.LeaseInput
	FetchLeaseResult   = fetching.LeaseResult
	FetchLeaseView     = fetching.LeaseView
	FetchLeaseFindings = fetching.LeaseFindings
)

// Fetcher runs on the fetch task queue: the fetch stage (internal/fetching) with Temporal's
// heartbeats, metrics and logger.
type Fetcher struct {
	Store    *store.Store
	Blob     *blob.Store
	Bodies   *segment.Writer // where bodies go (nil: one content-addressed object each)
	Client   *fetch.Client
	Crawls   *policy.Crawls
	Admitter *admit.Admitter
	Dialer   *netguard.Dialer // judges hosts' addresses (nil: any may be dialed)
	// Control tells of crawl controls (pause, stop, block) as they commit, so the URL states
	// a window of requests read stay good until one comes (nil: every request reads them).
	Control *store.ControlWatch
	// Schedule books hosts' request time (and their addresses', per-IP politeness; nil: the
	// store's schedule, no per-IP limit).
	Schedule *pacing.Schedule
	// Stopping is closed when this worker begins to stop: a running lease ends early (as if
	// its time were up), so the host's next lease starts on a live worker at once.
	Stopping <-chan struct{}
	// LocalSlots bounds the local leases this worker runs at once (TRAWLER_LOCAL_LEASE_CONCURRENCY;
	// nil: no local lease): the fetch role's concurrency and rate limits do not reach them.
	LocalSlots chan struct{}
	// Beats sends fetch leases' heartbeats by task token (token_beats.go: the worker's
	// Temporal client; nil: through the SDK's activity.RecordHeartbeat).
	Beats heartbeater
	// BeatEvery is the worker's heartbeat throttle (TRAWLER_HEARTBEAT_MAX): under
	// crawl.HeartbeatEvery (a test's setting) a lease beats that often, else every
	// crawl.LeaseBeatEvery (fetching.Stage.BeatEvery).
	BeatEvery time.Duration
}

// FetchBatch runs one fetch lease (the activity keeps the name it had when leases were
// batches: histories schedule it by name). A retry goes on from the counts it last heartbeated
// and takes back its predecessor's claims from Postgres (fetching.LeaseBeat).
func (f *Fetcher) FetchBatch(ctx context.Context, in FetchLeaseInput) (FetchLeaseResult, error) {
	var resumed fetching.LeaseBeat
	if activity.HasHeartbeatDetails(ctx) {
		_ = activity.GetHeartbeatDetails(ctx, &resumed)
	}
	if f.Beats == nil {
		return f.stage(ctx, nil).Lease(ctx, in, resumed, int(activity.GetInfo(ctx).Attempt))
	}
	// (token_beats.go: the lease beats by its task token, so a busy server does not end it)
	info := activity.GetInfo(ctx)
	lctx, beat, stop := beatingContext(ctx, f.Beats, info.TaskToken, info.HeartbeatTimeout, activity.GetLogger(ctx))
	defer stop()
	res, err := f.stage(lctx, func(r fetching.LeaseBeat) { beat(r) }).Lease(lctx, in, resumed, int(info.Attempt))
	return res, beatOutcome(ctx, lctx, f.Beats, info.TaskToken, err)
}

// errNoFetchStage is a local lease's failure on a workflow worker that runs no fetch stage.
var errNoFetchStage = errors.New("activities: this workflow worker runs no fetch stage; the host goes on in activity leases")

// FetchLocalLease runs a host run's first, short lease as a local activity in the workflow
// worker (the host workflow's revision 6): the same lease as FetchBatch, without heartbeats (a
// local activity has none; its workflow task stands in for them) and with one attempt. A
// workflow worker without a fetch stage answers errNoFetchStage, and the host workflow runs an
// activity lease instead.
func (f *Fetcher) FetchLocalLease(ctx context.Context, in FetchLeaseInput) (FetchLeaseResult, error) {
	if f == nil || f.Store == nil || f.LocalSlots == nil {
		return FetchLeaseResult{}, errNoFetchStage
	}
	select {
	case f.LocalSlots <- struct{}{}:
		defer func() { <-f.LocalSlots }()
	default:
		return FetchLeaseResult{}, temporal.NewNonRetryableApplicationError("activities: every local lease of this workflow worker is taken",
			crawl.ErrLocalLeasesBusy, nil)
	}
	return f.stage(ctx, nil).Lease(ctx, in, fetching.LeaseBeat{}, int(activity.GetInfo(ctx).Attempt))
}

// stage is the fetch stage over this worker's stores, reporting to ctx's activity; beat is
// its heartbeat (nil: ctx's activity's, which a local activity has none of).
func (f *Fetcher) stage(ctx context.Context, beat func(fetching.LeaseBeat)) *fetching.Stage {
	if beat == nil {
		beat = func(r fetching.LeaseBeat) { activity.RecordHeartbeat(ctx, r) }
	}
	s := &fetching.Stage{Frontier: f.Store.Frontier(), Fetches: f.Store.Fetches(), Hosts: f.Store.Hosts(), Payloads: f.Store.Documents(),
		Clock: f.Store.Clock(), Client: f.Client, Crawls: f.Crawls, Admit: admitDiscovered(ctx, f.Admitter),
		StoreBody: f.storeBody, Dialer: f.Dialer, Control: f.Control, Schedule: scheduleOf(f.Schedule, f.Store), Stopping: f.Stopping, BeatEvery: f.BeatEvery,
		Hooks: fetching.Hooks{
			Beat:  beat,
			Count: func(name string, n int64, tags ...string) { count(ctx, name, n, tags...) },
			Time:  func(name string, d time.Duration) { activity.GetMetricsHandler(ctx).Timer(name).Record(d) },
			Log:   activity.GetLogger(ctx),
		}}
	if f.Bodies != nil {
		s.Flush = f.Bodies.Flush
	}
	return s
}

// storeBody puts a body into the fetch worker's current segment (one PUT for every body its
// leases fetch in a few seconds) and returns its reference and the wait for the segment to be
// stored. Without a segment writer it stores the body alone, content-addressed.
func (f *Fetcher) storeBody(ctx context.Context, crawlID string, body []byte) (string, func(context.Context) error, error) {
	if f.Bodies == nil {
		key, err := f.Blob.PutBody(ctx, body)
		return key, nil, err
	}
	return f.Bodies.Add(crawlID, body)
}

// scheduleOf is s, or the store's host schedule without per-IP politeness when s is nil.
func scheduleOf(s *pacing.Schedule, st *store.Store) *pacing.Schedule {
	if s != nil {
		return s
	}
	return &pacing.Schedule{Store: st.Schedule()}
}
