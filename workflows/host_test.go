package workflows

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/trawlerdev/trawler/activities"
	"github.com/trawlerdev/trawler/internal/clock"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/pacing"
)

type hostEnv struct {
	*testsuite.TestWorkflowEnvironment
	frontier *activities.Frontier
	fetcher  *activities.Fetcher
	fetches  []time.Time // workflow time at each lease's first request
	claims   int
	// waitedInBatch counts leases that started before their NotBefore and waited for it.
	waitedInBatch int
	upserts       []string // HostState values upserted
	// serve hands out the host's due URLs to the leases' own claims (claimsOf); dryLeases
	// counts the leases that found none.
	serve     func() []crawl.Claimed
	dryLeases int
	nextDue   *time.Time // what a dry lease says of the host's next due URL
	leases    []activities.FetchLeaseInput
}

func newHostEnv(t *testing.T) *hostEnv {
	var s testsuite.WorkflowTestSuite
	e := &hostEnv{TestWorkflowEnvironment: s.NewTestWorkflowEnvironment(), frontier: &activities.Frontier{}, fetcher: &activities.Fetcher{}}
	e.RegisterActivity(e.frontier)
	e.RegisterActivity(e.fetcher)
	e.OnUpsertTypedSearchAttributes(mock.Anything).Run(func(args mock.Arguments) {
		v, _ := args.Get(0).(temporal.SearchAttributes).GetKeyword(crawl.SearchHostState)
		e.upserts = append(e.upserts, v)
	}).Return(nil).Maybe()
	e.serve = func() []crawl.Claimed { return nil }
	t.Cleanup(func() { e.AssertExpectations(t) })
	return e
}

// claimsOf serves n chunks of k URLs to the leases' claims, then nothing.
func (e *hostEnv) claimsOf(n, k int) {
	e.serve = func() []crawl.Claimed {
		e.claims++
		if e.claims > n {
			return nil
		}
		var urls []crawl.Claimed
		for i := 0; i < k; i++ {
			urls = append(urls, crawl.Claimed{CrawlID: "c", Hash: []byte{byte(e.claims), byte(i)}, URL: "http://h.test/"})
		}
		return urls
	}
}

// lease is a lease's claim of its first chunk: its URLs, or, when none are due, the dry
// result that says when the next one is.
func (e *hostEnv) lease() ([]crawl.Claimed, *activities.FetchLeaseResult) {
	urls := e.serve()
	if len(urls) > 0 {
		return urls, nil
	}
	e.dryLeases++
	next := e.nextDue
	e.nextDue = nil // said once: by then it has been claimed
	return nil, &activities.FetchLeaseResult{LeaseFindings: activities.FetchLeaseFindings{Dry: true, NextDue: next}}
}

// fetchOK answers each lease as one chunk fetched. A lease whose NotBefore is near waits for
// it itself (its one request is at NotBefore); one further off should have been preceded by a
// durable timer and fails.
func (e *hostEnv) fetchOK() {
	e.OnActivity(e.fetcher.FetchBatch, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.FetchLeaseInput) (activities.FetchLeaseResult, error) {
			now := e.Now()
			e.leases = append(e.leases, in)
			urls, dry := e.lease()
			if dry != nil {
				return *dry, nil
			}
			if in.NotBefore.Sub(now) > pacing.InLeaseWait {
				return activities.FetchLeaseResult{}, errors.New("activity started long before NotBefore: the workflow did not wait")
			}
			sent := clock.Later(now, in.NotBefore)
			e.fetches = append(e.fetches, sent)
			if sent.After(now) {
				e.waitedInBatch++
			}
			return activities.FetchLeaseResult{LeaseView: activities.FetchLeaseView{Done: len(urls), Fetched: len(urls)}, LeaseFindings: activities.FetchLeaseFindings{LastRequestAt: sent}}, nil
		})
}

// leaseInput is a host fetching in one-minute leases, 1 s apart.
func leaseInput() crawl.HostInput {
	in := hostInput(time.Second)
	in.Revision, in.Config.FetchLease = crawl.WorkflowRevision, crawl.Duration(time.Minute)
	return in
}

func hostInput(delay time.Duration) crawl.HostInput {
	return crawl.HostInput{Host: "h.test", Config: crawl.HostConfig{Delay: crawl.Duration(delay),
		BatchWindow: crawl.Duration(10 * delay), IdleTimeout: crawl.Duration(time.Minute)}}
}

// A crawl-delay longer than pacing.InLeaseWait is waited on a durable timer; a shorter one inside
// the next batch, which starts at once and sends its first request no earlier than NotBefore.
func TestHostWaitsTheDelayBetweenBatches(t *testing.T) {
	for _, tc := range []struct {
		delay   time.Duration
		inBatch bool
	}{{2 * time.Second, true}, {10 * time.Second, false}} {
		t.Run(tc.delay.String(), func(t *testing.T) {
			e := newHostEnv(t)
			e.claimsOf(3, 10)
			e.fetchOK()
			e.ExecuteWorkflow(HostWorkflow, hostInput(tc.delay))
			if !e.IsWorkflowCompleted() || e.GetWorkflowError() != nil {
				t.Fatalf("completed %v err %v", e.IsWorkflowCompleted(), e.GetWorkflowError())
			}
			if len(e.fetches) != 3 {
				t.Fatalf("%d fetch batches, want 3", len(e.fetches))
			}
			for i := 1; i < len(e.fetches); i++ {
				if gap := e.fetches[i].Sub(e.fetches[i-1]); gap < tc.delay {
					t.Errorf("batch %d's first request %v after the previous one's last; want >= the %v delay", i, gap, tc.delay)
				}
			}
			if want := map[bool]int{true: 2, false: 0}[tc.inBatch]; e.waitedInBatch != want {
				t.Errorf("%d batches waited for their slot themselves, want %d", e.waitedInBatch, want)
			}
		})
	}
}

func TestHostBacksOffAndReleasesClaimsWhenFetchingFails(t *testing.T) {
	e := newHostEnv(t)
	calls := 0
	e.OnActivity(e.fetcher.FetchBatch, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.FetchLeaseInput) (activities.FetchLeaseResult, error) {
			calls++
			e.fetches = append(e.fetches, e.Now())
			if calls > 20 { // Postgres is back: the host has nothing due
				return activities.FetchLeaseResult{LeaseFindings: activities.FetchLeaseFindings{Dry: true}}, nil
			}
			return activities.FetchLeaseResult{}, temporal.NewApplicationError("postgres is down", "Down")
		})
	var owners []string
	e.OnActivity(e.frontier.Abandon, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.AbandonInput) error {
		owners = append(owners, in.Owners...)
		return nil
	})
	e.ExecuteWorkflow(HostWorkflow, hostInput(time.Second))
	if e.GetWorkflowError() != nil {
		t.Fatal(e.GetWorkflowError())
	}
	if calls != 21 { // 2 leases × 10 attempts of the activity retry policy, then a dry one
		t.Errorf("%d activity attempts, want 21", calls)
	}
	// Each failed lease hands back what it holds by owner: its first claim and its chunks.
	if len(owners) != 4 || !slices.Equal(owners[:2], crawl.LeaseOwners(owners[0])) || owners[2] == owners[0] {
		t.Errorf("abandoned by owners %q, want each lease's owner and its chunk owner", owners)
	}
	// The second lease waited out an exponential backoff, not just the delay.
	if gap := e.fetches[10].Sub(e.fetches[9]); gap < 1500*time.Millisecond { // 2 × 1s, ±20%
		t.Errorf("no backoff after a failed lease: next lease %v later", gap)
	}
}

func TestHostPauseStopsFetchingUntilResume(t *testing.T) {
	e := newHostEnv(t)
	e.claimsOf(5, 1)
	e.fetchOK()
	e.OnActivity(e.frontier.Abandon, mock.Anything, mock.Anything).Return(nil).Maybe() // a lease the pause interrupts
	var pausedAt, resumedAt time.Time
	e.RegisterDelayedCallback(func() {
		pausedAt = e.Now()
		e.SignalWorkflow(crawl.SignalPause, nil)
	}, 3*time.Second)
	e.RegisterDelayedCallback(func() {
		v, err := e.QueryWorkflow(crawl.QueryStatus)
		if err != nil {
			t.Error(err)
			return
		}
		var st crawl.HostStatus
		_ = v.Get(&st)
		if !st.Paused || st.State != "paused" {
			t.Errorf("status while paused: %+v", st)
		}
		resumedAt = e.Now()
		e.SignalWorkflow(crawl.SignalResume, nil)
	}, time.Hour)
	// A delay above pacing.InLeaseWait: the pause comes during a durable timer (a mocked batch cannot
	// be interrupted while it waits for its slot).
	e.ExecuteWorkflow(HostWorkflow, hostInput(6*time.Second))
	if e.GetWorkflowError() != nil {
		t.Fatal(e.GetWorkflowError())
	}
	if len(e.fetches) < 4 {
		t.Fatalf("%d batches, want at least 4 (one may be interrupted by the pause)", len(e.fetches))
	}
	for _, f := range e.fetches {
		if f.After(pausedAt) && f.Before(resumedAt) {
			t.Errorf("fetched at %v while paused (%v–%v)", f, pausedAt, resumedAt)
		}
	}
}

func continuedInput(t *testing.T, err error) crawl.HostInput {
	t.Helper()
	var can *workflow.ContinueAsNewError
	if !errors.As(err, &can) {
		t.Fatalf("want Continue-As-New, got %v", err)
	}
	var next crawl.HostInput
	if err := converter.GetDefaultDataConverter().FromPayloads(can.Input, &next); err != nil {
		t.Fatal(err)
	}
	return next
}

func TestHostContinuesAsNewCarryingItsState(t *testing.T) {
	e := newHostEnv(t)
	e.claimsOf(1000, 1)
	e.fetchOK()
	e.OnActivity(e.frontier.Abandon, mock.Anything, mock.Anything).Return(nil).Maybe()
	e.RegisterDelayedCallback(func() {
		e.SignalWorkflow(crawl.SignalThrottle, crawl.Throttle{Delay: crawl.Duration(7 * time.Second)})
	}, 5*time.Second)
	in := hostInput(time.Second)
	in.Config.MaxRunBatches = 20
	e.ExecuteWorkflow(HostWorkflow, in)
	next := continuedInput(t, e.GetWorkflowError())
	var can *workflow.ContinueAsNewError
	if errors.As(e.GetWorkflowError(), &can) && can.TaskQueueName != crawl.OnHostQueue(can.TaskQueueName) {
		t.Errorf("continued on %q, not on the hosts' queue", can.TaskQueueName)
	}
	// 20 batches, one of which the throttle may have interrupted (its claims are released).
	if n := len(e.fetches); n < 19 || n > 20 {
		t.Errorf("%d batches before Continue-As-New, want 20 (19 if one was cancelled before it ran)", n)
	}
	if next.State.ThrottleDelay.D() != 7*time.Second || next.State.Runs != 1 || next.Revision != crawl.WorkflowRevision {
		t.Errorf("state carried into the next run: %+v", next.State)
	}
	if next.State.Fetched < 19 || next.State.NextRequestAt.IsZero() || next.Config.MaxRunBatches != 20 || next.Host != "h.test" {
		t.Errorf("counters or pacing lost: %+v", next)
	}
}

// Signals pending when the run decides to continue are applied to the state it carries.
func TestHostContinueAsNewDrainsPendingSignals(t *testing.T) {
	e := newHostEnv(t)
	e.claimsOf(5, 1)
	e.fetchOK()
	// While the run waits out its delay (on a timer: above pacing.InLeaseWait) after its first batch,
	// two signals arrive at once: one wakes it, the other is still pending and is drained; both
	// reach the next run.
	e.RegisterDelayedCallback(func() {
		e.SignalWorkflow(crawl.SignalThrottle, crawl.Throttle{Delay: crawl.Duration(9 * time.Second)})
		e.SignalWorkflow(crawl.SignalURLsAdded, crawl.URLsAdded{Config: crawl.HostConfig{Delay: crawl.Duration(8 * time.Second)}})
	}, 3*time.Second)
	in := hostInput(6 * time.Second)
	in.Config.MaxRunBatches = 2
	e.ExecuteWorkflow(HostWorkflow, in)
	next := continuedInput(t, e.GetWorkflowError())
	if next.State.ThrottleDelay.D() != 9*time.Second || next.Config.Delay.D() != 8*time.Second {
		t.Errorf("pending signals lost across Continue-As-New: %+v", next)
	}
	// The throttle applies from the last request: the second batch came 9s after the first.
	if len(e.fetches) != 2 || e.fetches[1].Sub(e.fetches[0]) < 9*time.Second {
		t.Errorf("batches at %v", e.fetches)
	}
}

func TestHostEndsWhenIdleAndHonoursRetryAfter(t *testing.T) {
	e := newHostEnv(t)
	e.claimsOf(2, 1)
	first := true
	e.OnActivity(e.fetcher.FetchBatch, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.FetchLeaseInput) (activities.FetchLeaseResult, error) {
			if _, dry := e.lease(); dry != nil {
				return *dry, nil
			}
			e.fetches = append(e.fetches, e.Now())
			if first {
				first = false
				return activities.FetchLeaseResult{LeaseView: activities.FetchLeaseView{Done: 1, Errors: 1},
					LeaseFindings: activities.FetchLeaseFindings{ConsecutiveErrors: 1, LastRequestAt: e.Now(), DeferUntil: e.Now().Add(2 * time.Minute)}}, nil
			}
			return activities.FetchLeaseResult{LeaseView: activities.FetchLeaseView{Done: 1, Fetched: 1}, LeaseFindings: activities.FetchLeaseFindings{LastRequestAt: e.Now()}}, nil
		})
	e.ExecuteWorkflow(HostWorkflow, hostInput(time.Second))
	if e.GetWorkflowError() != nil || len(e.fetches) != 2 {
		t.Fatalf("err %v, %d batches", e.GetWorkflowError(), len(e.fetches))
	}
	if gap := e.fetches[1].Sub(e.fetches[0]); gap < 2*time.Minute {
		t.Errorf("next batch %v after a Retry-After of 2m", gap)
	}
}

// A run started by this revision's code (as the wake-up does: HostState "active" set at
// start) records no version marker and does not upsert the state it already has; once its
// queue runs dry it ends at once, without idling out its timeout in state "idle".
func TestHostStartedAtThisRevisionSkipsRedundantCommands(t *testing.T) {
	e := newHostEnv(t)
	e.claimsOf(1, 1)
	e.fetchOK()
	if err := e.SetTypedSearchAttributesOnStart(temporal.NewSearchAttributes(crawl.SearchHostState.ValueSet(string(crawl.HostActive)))); err != nil {
		t.Fatal(err)
	}
	in := hostInput(time.Second)
	in.Revision = crawl.WorkflowRevision
	start := e.Now()
	e.ExecuteWorkflow(HostWorkflow, in)
	if e.GetWorkflowError() != nil || len(e.fetches) != 1 {
		t.Fatalf("err %v, %d batches", e.GetWorkflowError(), len(e.fetches))
	}
	if len(e.upserts) != 0 {
		t.Errorf("state upserts %q, want none (active was set at start, and a dry host ends)", e.upserts)
	}
	if took := e.Now().Sub(start); took >= in.Config.IdleTimeout.D() {
		t.Errorf("the dry host ended after %v: it idled out its timeout", took)
	}
}

// The workflow claims nothing itself: each lease claims its own URLs, and the one that finds
// none says when the host's next URL is due; the workflow waits for it on a timer and leases
// again, and ends when nothing more is due.
func TestHostLeavesClaimsToItsLeases(t *testing.T) {
	e := newHostEnv(t)
	e.claimsOf(2, 1)
	e.fetchOK()
	in := leaseInput()
	due := e.Now().Add(30 * time.Second)
	e.nextDue = &due
	e.ExecuteWorkflow(HostWorkflow, in)
	if e.GetWorkflowError() != nil {
		t.Fatal(e.GetWorkflowError())
	}
	// Two leases with URLs, a dry one (next due in 30 s), and after the timer another dry one
	// (nothing due any more): the host ends.
	if len(e.fetches) != 2 || e.dryLeases != 2 {
		t.Fatalf("%d leases with URLs, %d dry, want 2 and 2", len(e.fetches), e.dryLeases)
	}
	owners := map[string]bool{}
	for _, l := range e.leases {
		if l.Owner == "" || l.Chunk == 0 || l.LeaseFor != time.Minute || l.ClaimTTL == 0 {
			t.Errorf("lease input %+v: want an owner, a chunk size, the lease's length and a claim TTL", l)
		}
		owners[l.Owner] = true
	}
	if len(owners) != len(e.leases) {
		t.Errorf("%d owners for %d leases: each lease claims under its own", len(owners), len(e.leases))
	}
	if waited := e.Now().Sub(due); waited < 0 {
		t.Errorf("the host ended %v before its next due URL: it did not wait for it", -waited)
	}
}

// A host starts no processing child (its crawls' processing children take its pages); one
// that holds what a new run would not start with (here a throttle) idles out its timeout
// before it ends, so the throttle holds if its URLs come back meanwhile; one that holds
// nothing ends at once.
func TestHostEndsDryAtOnceUnlessItHoldsAThrottle(t *testing.T) {
	for _, throttled := range []bool{false, true} {
		e := newHostEnv(t)
		e.claimsOf(2, 1)
		e.fetchOK()
		in := leaseInput()
		if throttled {
			in.State.ThrottleDelay = crawl.Duration(2 * time.Second)
		}
		children := 0
		e.SetOnChildWorkflowStartedListener(func(*workflow.Info, workflow.Context, converter.EncodedValues) { children++ })
		start := e.Now()
		e.ExecuteWorkflow(HostWorkflow, in)
		if e.GetWorkflowError() != nil || len(e.fetches) != 2 || children != 0 {
			t.Fatalf("throttled %v: err %v, %d leases, %d processing children (want 2 and none)",
				throttled, e.GetWorkflowError(), len(e.fetches), children)
		}
		idled := e.Now().Sub(start) >= in.Config.IdleTimeout.D()
		if idled != throttled || slices.Contains(e.upserts, "idle") != throttled {
			t.Errorf("throttled %v: idled %v (upserts %q)", throttled, idled, e.upserts)
		}
	}
}
