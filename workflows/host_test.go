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
)

type hostEnv struct {
	*testsuite.TestWorkflowEnvironment
	frontier *activities.Frontier
	fetcher  *activities.Fetcher
	fetches  []time.Time // workflow time at each FetchBatch's first request
	claims   int
	// waitedInBatch counts batches that started before their NotBefore and waited for it.
	waitedInBatch int
	upserts       []string // HostState values upserted
	noLeaseRows   int      // leases told to write no lease row
	// serve hands out the host's due URLs (claimsOf); workflowClaims counts the workflow's
	// own claims (local activities), dryLeases the self-claiming leases that found none.
	serve          func() []crawl.Claimed
	workflowClaims int
	dryLeases      int
	nextDue        *time.Time // what a dry lease says of the host's next due URL
	leases         []activities.FetchBatchInput
}

func newHostEnv(t *testing.T) *hostEnv {
	var s testsuite.WorkflowTestSuite
	e := &hostEnv{TestWorkflowEnvironment: s.NewTestWorkflowEnvironment(), frontier: &activities.Frontier{}, fetcher: &activities.Fetcher{}}
	e.RegisterActivity(e.frontier)
	e.RegisterActivity(e.fetcher)
	e.RegisterWorkflow(ProcessPageWorkflow)
	e.RegisterActivity(&activities.Processor{})
	// Processing takes a second: a lease's processing child outlives its fetch activity.
	e.OnActivity((&activities.Processor{}).Process, mock.Anything, mock.Anything).After(time.Second).Return(crawl.ProcessResult{}, nil).Maybe()
	e.OnUpsertTypedSearchAttributes(mock.Anything).Run(func(args mock.Arguments) {
		v, _ := args.Get(0).(temporal.SearchAttributes).GetKeyword(crawl.SearchHostState)
		e.upserts = append(e.upserts, v)
	}).Return(nil).Maybe()
	e.OnActivity(e.frontier.FetchedOf, mock.Anything, mock.Anything).Return([]crawl.PageRef(nil), nil).Maybe()
	t.Cleanup(func() { e.AssertExpectations(t) })
	return e
}

// claimsOf serves n batches of k URLs, then nothing: to the workflow's claims (revision 3
// and before) or to the leases' own (revision 4, see fetchOK).
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
	e.OnActivity(e.frontier.Claim, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.ClaimInput) (activities.ClaimResult, error) {
			e.workflowClaims++
			return activities.ClaimResult{URLs: e.serve()}, nil
		}).Maybe()
}

// fetchOK answers each batch as fetched. A batch whose NotBefore is near waits for it itself
// (its one request is at NotBefore); one further off should have been preceded by a durable
// timer and fails.
func (e *hostEnv) fetchOK() {
	e.OnActivity(e.fetcher.FetchBatch, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.FetchBatchInput) (activities.FetchBatchResult, error) {
			now := e.Now()
			e.leases = append(e.leases, in)
			if in.SelfClaim && len(in.URLs) == 0 {
				if in.URLs = e.serve(); len(in.URLs) == 0 {
					e.dryLeases++
					next := e.nextDue
					e.nextDue = nil // said once: by then it has been claimed
					return activities.FetchBatchResult{Dry: true, NextDue: next}, nil
				}
			}
			if in.NotBefore.Sub(now) > inBatchWait {
				return activities.FetchBatchResult{}, errors.New("activity started long before NotBefore: the workflow did not wait")
			}
			sent := clock.Later(now, in.NotBefore)
			e.fetches = append(e.fetches, sent)
			if in.NoLeaseRow {
				e.noLeaseRows++
			}
			if sent.After(now) {
				e.waitedInBatch++
			}
			res := activities.FetchBatchResult{Done: len(in.URLs), Fetched: len(in.URLs), LastRequestAt: sent}
			if in.LeaseFor == 0 { // a lease's pages go to the processing child beside it, not into the result
				res.Pages = []crawl.PageRef{{CrawlID: "c", URL: in.URLs[0].URL}}
			}
			return res, nil
		})
}

// leaseInput is a host of the given revision fetching in one-minute leases, 1 s apart.
func leaseInput(revision int) crawl.HostInput {
	in := hostInput(time.Second)
	in.Revision, in.Config.FetchLease = revision, crawl.Duration(time.Minute)
	return in
}

func hostInput(delay time.Duration) crawl.HostInput {
	return crawl.HostInput{Host: "h.test", Config: crawl.HostConfig{Delay: crawl.Duration(delay),
		BatchWindow: crawl.Duration(10 * delay), IdleTimeout: crawl.Duration(time.Minute)}}
}

// A crawl-delay longer than inBatchWait is waited on a durable timer; a shorter one inside
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
	e.claimsOf(2, 3)
	calls := 0
	e.OnActivity(e.fetcher.FetchBatch, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.FetchBatchInput) (activities.FetchBatchResult, error) {
			calls++
			e.fetches = append(e.fetches, e.Now())
			return activities.FetchBatchResult{}, temporal.NewApplicationError("postgres is down", "Down")
		})
	released := 0
	var owners []string
	e.OnActivity(e.frontier.Abandon, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.AbandonInput) ([]crawl.PageRef, error) {
		released += len(in.URLs)
		owners = append(owners, in.Owners...)
		return nil, nil
	})
	e.ExecuteWorkflow(HostWorkflow, hostInput(time.Second))
	if e.GetWorkflowError() != nil {
		t.Fatal(e.GetWorkflowError())
	}
	if calls != 20 { // 2 batches × 10 attempts of the activity retry policy
		t.Errorf("%d activity attempts, want 20", calls)
	}
	if released != 6 {
		t.Errorf("released %d claims, want all 6", released)
	}
	// Each batch hands back what its owner holds, the batch's own top-ups included.
	if len(owners) != 4 || owners[1] != activities.TopUpOwner(owners[0]) || owners[2] == owners[0] {
		t.Errorf("abandoned by owners %q, want each batch's owner and its top-up owner", owners)
	}
	// The second batch waited out an exponential backoff, not just the delay.
	if gap := e.fetches[10].Sub(e.fetches[9]); gap < 1500*time.Millisecond { // 2 × 1s, ±20%
		t.Errorf("no backoff after a failed batch: next batch %v later", gap)
	}
}

func TestHostPauseStopsFetchingUntilResume(t *testing.T) {
	e := newHostEnv(t)
	e.claimsOf(5, 1)
	e.fetchOK()
	e.OnActivity(e.frontier.Abandon, mock.Anything, mock.Anything).Return([]crawl.PageRef(nil), nil).Maybe() // a batch the pause interrupts
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
	// A delay above inBatchWait: the pause comes during a durable timer (a mocked batch cannot
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
	e.OnActivity(e.frontier.Abandon, mock.Anything, mock.Anything).Return([]crawl.PageRef(nil), nil).Maybe()
	e.RegisterDelayedCallback(func() {
		e.SignalWorkflow(crawl.SignalThrottle, crawl.Throttle{Delay: crawl.Duration(7 * time.Second)})
	}, 5*time.Second)
	in := hostInput(time.Second)
	in.Config.MaxRunBatches = 20
	e.ExecuteWorkflow(HostWorkflow, in)
	next := continuedInput(t, e.GetWorkflowError())
	// 20 batches, one of which the throttle may have interrupted (its claims are released).
	if n := len(e.fetches); n < 19 || n > 20 {
		t.Errorf("%d batches before Continue-As-New, want 20 (19 if one was cancelled before it ran)", n)
	}
	if next.State.ThrottleDelay.D() != 7*time.Second || next.State.Runs != 1 || next.State.ProcessSeq < 19 {
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
	// While the run waits out its delay (on a timer: above inBatchWait) after its first batch,
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
		func(_ context.Context, in activities.FetchBatchInput) (activities.FetchBatchResult, error) {
			e.fetches = append(e.fetches, e.Now())
			if first {
				first = false
				return activities.FetchBatchResult{Done: 1, Errors: 1, ConsecutiveErrors: 1, LastRequestAt: e.Now(),
					DeferUntil: e.Now().Add(2 * time.Minute)}, nil
			}
			return activities.FetchBatchResult{Done: 1, Fetched: 1, LastRequestAt: e.Now()}, nil
		})
	e.ExecuteWorkflow(HostWorkflow, hostInput(time.Second))
	if e.GetWorkflowError() != nil || len(e.fetches) != 2 {
		t.Fatalf("err %v, %d batches", e.GetWorkflowError(), len(e.fetches))
	}
	if gap := e.fetches[1].Sub(e.fetches[0]); gap < 2*time.Minute {
		t.Errorf("next batch %v after a Retry-After of 2m", gap)
	}
}

// A host that runs dry while its own pages are being processed claims again when the
// processing child completes (its links are admitted by then), with no signal; its empty
// claims meanwhile are quiet so admissions wake nobody.
func TestHostClaimsAgainWhenItsProcessingCompletes(t *testing.T) {
	e := newHostEnv(t)
	var expecting []bool
	e.OnActivity(e.frontier.Claim, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.ClaimInput) (activities.ClaimResult, error) {
			e.claims++
			expecting = append(expecting, in.Expecting)
			if e.claims == 1 || e.claims == 3 { // the second URL is there once the first page is processed
				return activities.ClaimResult{URLs: []crawl.Claimed{{CrawlID: "c", Hash: []byte{byte(e.claims)}, URL: "http://h.test/"}}}, nil
			}
			return activities.ClaimResult{}, nil
		})
	e.fetchOK()
	e.ExecuteWorkflow(HostWorkflow, hostInput(time.Second))
	if !e.IsWorkflowCompleted() || e.GetWorkflowError() != nil {
		t.Fatalf("completed %v err %v", e.IsWorkflowCompleted(), e.GetWorkflowError())
	}
	if len(e.fetches) != 2 || e.fetches[1].Sub(e.fetches[0]) > 10*time.Second {
		t.Fatalf("batches at %v: want the second right after the first page's processing, not after a signal", e.fetches)
	}
	if want := []bool{false, true, false, true, false}; !slices.Equal(expecting, want) {
		t.Errorf("claims expecting their processing: %v, want %v", expecting, want)
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
	in.Revision = crawl.HostRevision
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

// A host of revision 4 claims nothing itself: each lease claims its own URLs, and the one
// that finds none says when the host's next URL is due; the workflow waits for it on a timer
// and leases again, and ends when nothing more is due.
func TestHostOfRevision4LeavesClaimsToItsLeases(t *testing.T) {
	e := newHostEnv(t)
	e.claimsOf(2, 1)
	e.fetchOK()
	in := leaseInput(4)
	due := e.Now().Add(30 * time.Second)
	e.nextDue = &due
	e.ExecuteWorkflow(HostWorkflow, in)
	if e.GetWorkflowError() != nil || e.workflowClaims != 0 {
		t.Fatalf("err %v, %d claims by the workflow (want none)", e.GetWorkflowError(), e.workflowClaims)
	}
	// Two leases with URLs, a dry one (next due in 30 s), and after the timer another dry one
	// (nothing due any more): the host ends.
	if len(e.fetches) != 2 || e.dryLeases != 2 {
		t.Fatalf("%d leases with URLs, %d dry, want 2 and 2", len(e.fetches), e.dryLeases)
	}
	owners := map[string]bool{}
	for _, l := range e.leases {
		if !l.SelfClaim || len(l.URLs) != 0 || !l.NoLeaseRow || l.Owner == "" || l.TopUp == 0 {
			t.Errorf("lease input %+v: want a self-claiming lease with an owner, a chunk size and no URLs", l)
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

// A host of revision 3 starts no processing child (its crawls' processing children take its
// pages) and its leases write no lease row (nobody reads it); one that holds what a new run
// would not start with (here a throttle) still idles out its timeout before it ends, so the
// throttle holds if its URLs come back meanwhile.
func TestHostOfRevision3LeavesProcessingToItsCrawls(t *testing.T) {
	for _, throttled := range []bool{false, true} {
		e := newHostEnv(t)
		e.claimsOf(2, 1)
		e.fetchOK()
		in := leaseInput(3)
		if throttled {
			in.State.ThrottleDelay = crawl.Duration(2 * time.Second)
		}
		children := 0
		e.SetOnChildWorkflowStartedListener(func(*workflow.Info, workflow.Context, converter.EncodedValues) { children++ })
		start := e.Now()
		e.ExecuteWorkflow(HostWorkflow, in)
		if e.GetWorkflowError() != nil || len(e.fetches) != 2 || children != 0 || e.noLeaseRows != 2 {
			t.Fatalf("throttled %v: err %v, %d leases (%d without a lease row), %d processing children (want 2, 2 and none)",
				throttled, e.GetWorkflowError(), len(e.fetches), e.noLeaseRows, children)
		}
		idled := e.Now().Sub(start) >= in.Config.IdleTimeout.D()
		if idled != throttled || slices.Contains(e.upserts, "idle") != throttled {
			t.Errorf("throttled %v: idled %v (upserts %q)", throttled, idled, e.upserts)
		}
	}
}

// A run of revision 2 fetches in leases: the fetch activity gets the lease's length and
// owner, and one processing child started with it gets the lease (not a page list); the
// pages it processes are never handed to a second child.
func TestHostFetchesInLeasesWithProcessingBeside(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	e := s.NewTestWorkflowEnvironment()
	fr, fe, pr := &activities.Frontier{}, &activities.Fetcher{}, &activities.Processor{}
	e.RegisterActivity(fr)
	e.RegisterActivity(fe)
	e.RegisterActivity(pr)
	e.RegisterWorkflow(ProcessPageWorkflow)
	e.OnUpsertTypedSearchAttributes(mock.Anything).Return(nil).Maybe()
	claims := 0
	e.OnActivity(fr.Claim, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.ClaimInput) (activities.ClaimResult, error) {
		if claims++; claims > 1 {
			return activities.ClaimResult{}, nil
		}
		return activities.ClaimResult{URLs: []crawl.Claimed{{CrawlID: "c", Hash: []byte{1}, URL: "http://h.test/"}}}, nil
	})
	var fetches []activities.FetchBatchInput
	e.OnActivity(fe.FetchBatch, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.FetchBatchInput) (activities.FetchBatchResult, error) {
		fetches = append(fetches, in)
		return activities.FetchBatchResult{Done: 1, Fetched: 40, LastRequestAt: e.Now()}, nil
	})
	var processed []crawl.ProcessInput
	e.OnActivity(pr.Process, mock.Anything, mock.Anything).After(time.Second).Return(func(_ context.Context, in crawl.ProcessInput) (crawl.ProcessResult, error) {
		processed = append(processed, in)
		return crawl.ProcessResult{}, nil
	})
	in := hostInput(time.Second)
	in.Revision = 2 // revision 3 leaves processing to the crawl's children
	in.Config.FetchLease = crawl.Duration(3 * time.Minute)
	e.ExecuteWorkflow(HostWorkflow, in)
	if e.GetWorkflowError() != nil || len(fetches) != 1 || len(processed) != 1 {
		t.Fatalf("err %v, %d fetches, %d processing children", e.GetWorkflowError(), len(fetches), len(processed))
	}
	f, p := fetches[0], processed[0]
	if f.LeaseFor != 3*time.Minute || f.Owner == "" || f.NoLeaseRow {
		t.Errorf("fetch input %+v: want a 3m lease with an owner", f)
	}
	if p.Lease == nil || p.Lease.Owner != f.Owner || !slices.Equal(p.Lease.Owners, activities.LeaseOwners(f.Owner)) || len(p.Pages) != 0 {
		t.Errorf("processing input %+v: want lease %q and no page list", p, f.Owner)
	}
}
