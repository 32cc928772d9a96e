package workflows

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/trawlerdev/trawler/activities"
	"github.com/trawlerdev/trawler/internal/crawl"
)

// crawlEnv runs CrawlWorkflow against mocked Postgres steps: Progress reports pending URLs
// until drainAt (workflow time since start), and the env records what the workflow did.
type crawlEnv struct {
	*testsuite.TestWorkflowEnvironment
	frontier *activities.Frontier
	archiver *activities.Archiver
	start    time.Time
	drainAt  time.Duration
	started  []activities.StartCrawlInput
	states   []crawl.CrawlState
	wakes    []time.Duration // each WakeStale's staleFor
	archives []bool          // each WriteWARC's Final
	finalAt  time.Duration   // since start, when the final WARC write began
	stateAt  []time.Duration // since start, when each state was set
	byteRate int64           // body bytes the crawl fetches a second (its progress's Bytes)
	looks    []time.Duration // since start, each progress read
	procs    []procRun       // each processing child, as it ran
	procsMu  sync.Mutex      // children run on the test environment's goroutines
}

// procRun is one of a crawl's processing children: when it started and ended (since the
// crawl's start) and how long it was asked to run.
type procRun struct {
	at, ended, runFor time.Duration
}

func newCrawlEnv(t *testing.T, drainAt time.Duration) *crawlEnv {
	return newCrawlEnvArchiving(t, drainAt, 0)
}

// newCrawlEnvArchiving is newCrawlEnv whose WARC writes each take archiveTakes.
func newCrawlEnvArchiving(t *testing.T, drainAt, archiveTakes time.Duration) *crawlEnv {
	var s testsuite.WorkflowTestSuite
	e := &crawlEnv{TestWorkflowEnvironment: s.NewTestWorkflowEnvironment(), frontier: &activities.Frontier{}, archiver: &activities.Archiver{}, drainAt: drainAt}
	e.RegisterActivity(e.frontier)
	e.RegisterActivity(e.archiver)
	e.start = e.Now()
	state := crawl.CrawlRunning
	e.OnActivity(e.frontier.StartCrawl, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.StartCrawlInput) (activities.StartCrawlResult, error) {
			e.started = append(e.started, in)
			return activities.StartCrawlResult{ProcessQueue: "q-process"}, nil
		}).Maybe()
	e.OnActivity(e.frontier.Progress, mock.Anything, mock.Anything).Return(
		func(_ context.Context, id string) (crawl.CrawlProgress, error) {
			e.looks = append(e.looks, e.Now().Sub(e.start))
			p := crawl.CrawlProgress{CrawlID: id, State: state, Admitted: 10, Pending: 5,
				Bytes: int64(e.Now().Sub(e.start)/time.Second) * e.byteRate}
			if e.Now().Sub(e.start) >= e.drainAt {
				p.Pending = 0
			}
			return p, nil
		}).Maybe()
	e.OnActivity(e.frontier.SetCrawlState, mock.Anything, mock.Anything, mock.Anything).Return(
		func(_ context.Context, _ string, s crawl.CrawlState) error {
			e.states, state = append(e.states, s), s
			e.stateAt = append(e.stateAt, e.Now().Sub(e.start))
			return nil
		}).Maybe()
	e.OnActivity(e.frontier.WakeStale, mock.Anything, mock.Anything, mock.Anything).Return(
		func(_ context.Context, _ string, staleFor time.Duration) (int, error) {
			e.wakes = append(e.wakes, staleFor)
			return 0, nil
		}).Maybe()
	e.OnActivity(e.frontier.StaleFetched, mock.Anything, mock.Anything, mock.Anything).Return(crawl.ProcessInput{}, nil).Maybe()
	e.OnActivity(e.archiver.WriteWARC, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.ArchiveInput) (activities.ArchiveResult, error) {
			e.archives = append(e.archives, in.Final)
			if in.Final {
				e.finalAt = e.Now().Sub(e.start)
			}
			return activities.ArchiveResult{}, nil
		}).After(archiveTakes).Maybe()
	// The crawl's processing children run for what they are asked.
	e.RegisterWorkflow(CrawlProcessingWorkflow)
	e.OnWorkflow(CrawlProcessingWorkflow, mock.Anything, mock.Anything).Return(
		func(ctx workflow.Context, in crawl.CrawlProcessing) (crawl.ProcessResult, error) {
			e.procsMu.Lock()
			i := len(e.procs)
			e.procs = append(e.procs, procRun{at: e.Now().Sub(e.start), runFor: in.For})
			e.procsMu.Unlock()
			err := workflow.Sleep(ctx, in.For)
			e.procsMu.Lock()
			e.procs[i].ended = e.Now().Sub(e.start)
			e.procsMu.Unlock()
			return crawl.ProcessResult{}, err
		}).Maybe()
	return e
}

func (e *crawlEnv) result(t *testing.T) crawl.CrawlProgress {
	t.Helper()
	if !e.IsWorkflowCompleted() {
		t.Fatal("the crawl workflow did not end")
	}
	var p crawl.CrawlProgress
	if err := e.GetWorkflowResult(&p); err != nil {
		t.Fatalf("crawl workflow: %v", err)
	}
	return p
}

// A crawl paused and resumed moves its state in Postgres each time, wakes its hosts on the
// resume, and ends done once nothing is pending, with its last WARC files written.
func TestCrawlPausesResumesAndEndsWhenDrained(t *testing.T) {
	e := newCrawlEnv(t, 40*time.Second)
	e.RegisterDelayedCallback(func() { e.SignalWorkflow(crawl.SignalPause, nil) }, 7*time.Second)
	e.RegisterDelayedCallback(func() { e.SignalWorkflow(crawl.SignalResume, nil) }, 12*time.Second)
	e.ExecuteWorkflow(CrawlWorkflow, CrawlInput{Spec: crawl.Spec{Name: "news", Seeds: []string{"http://a.test/"}}})
	p := e.result(t)
	if p.State != crawl.CrawlDone {
		t.Errorf("ended %q, want done", p.State)
	}
	if want := []crawl.CrawlState{crawl.CrawlPaused, crawl.CrawlRunning, crawl.CrawlDone}; !slices.Equal(e.states, want) {
		t.Errorf("states set %v, want %v", e.states, want)
	}
	if len(e.wakes) == 0 || e.wakes[0] != 0 {
		t.Errorf("wakes %v: the resume should wake every host with due URLs (staleFor 0) first", e.wakes)
	}
	if len(e.started) != 1 || e.started[0].CrawlID != "news" || e.started[0].Spec.Delay == 0 {
		t.Errorf("started %+v: once, as news, with the spec's defaults", e.started)
	}
	if len(e.archives) == 0 || !e.archives[len(e.archives)-1] {
		t.Errorf("WARC writes %v: the last should be final", e.archives)
	}
	if d := e.finalAt; d < 40*time.Second || d > 50*time.Second {
		t.Errorf("final WARC write after %v, want at the first progress look after the drain at 40s", d)
	}
}

// A stopped crawl ends at once with its pending URLs left (the stop skips them in Postgres),
// after the requests in flight have had time to land in its final WARC file.
func TestCrawlStopEndsItBeforeItDrains(t *testing.T) {
	e := newCrawlEnv(t, 24*time.Hour)
	e.RegisterDelayedCallback(func() { e.SignalWorkflow(crawl.SignalStop, nil) }, 3*time.Second)
	e.ExecuteWorkflow(CrawlWorkflow, CrawlInput{Spec: crawl.Spec{Name: "c", Seeds: []string{"http://a.test/"}, RequestTimeout: crawl.Duration(10 * time.Second)}})
	p := e.result(t)
	if !slices.Equal(e.states, []crawl.CrawlState{crawl.CrawlStopped}) || p.State != crawl.CrawlStopped || p.StopReason != crawl.StopBySignal {
		t.Errorf("states set %v, ended %q (%q): want stopped by the signal", e.states, p.State, p.StopReason)
	}
	if !slices.Equal(e.archives, []bool{true}) {
		t.Errorf("WARC writes %v, want one final", e.archives)
	}
	if d := e.finalAt; d < 3*time.Second+15*time.Second || d > 20*time.Second {
		t.Errorf("final WARC write after %v: want the stop, then the request timeout and 5 s", d)
	}
}

// A crawl started without a name takes it from its workflow ID, behind a deployment prefix;
// an invalid spec fails for good before anything is written.
func TestCrawlNameAndInvalidSpec(t *testing.T) {
	e := newCrawlEnv(t, 0)
	e.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: crawl.CrawlWorkflowID("prod-", "from-id")})
	e.ExecuteWorkflow(CrawlWorkflow, CrawlInput{Spec: crawl.Spec{Seeds: []string{"http://a.test/"}}})
	e.result(t)
	if len(e.started) != 1 || e.started[0].CrawlID != "from-id" {
		t.Errorf("started %+v, want crawl from-id", e.started)
	}

	bad := newCrawlEnv(t, 0)
	bad.ExecuteWorkflow(CrawlWorkflow, CrawlInput{Spec: crawl.Spec{Name: "x"}}) // no seeds
	var appErr *temporal.ApplicationError
	if err := bad.GetWorkflowError(); !errors.As(err, &appErr) || appErr.Type() != "InvalidSpec" || !appErr.NonRetryable() {
		t.Errorf("invalid spec: %v, want a non-retryable InvalidSpec", err)
	}
	if len(bad.started) != 0 {
		t.Errorf("an invalid spec started the crawl: %+v", bad.started)
	}
}

// A throttle signal to a crawl (the same JSON as a host's) is recorded for all its hosts in
// one control, and the crawl goes on.
func TestCrawlThrottleIsOneControlForEveryHost(t *testing.T) {
	e := newCrawlEnv(t, 20*time.Second)
	var got []activities.ThrottleInput
	e.OnActivity(e.frontier.ThrottleCrawl, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.ThrottleInput) (crawl.ControlResult, error) {
			got = append(got, in)
			return crawl.ControlResult{Signal: crawl.SignalThrottle}, nil
		})
	e.RegisterDelayedCallback(func() {
		e.SignalWorkflow(crawl.SignalThrottle, crawl.Throttle{Delay: crawl.Duration(5 * time.Second), Concurrency: 1})
	}, 3*time.Second)
	e.RegisterDelayedCallback(func() { e.SignalWorkflow(crawl.SignalThrottle, crawl.Throttle{Reset: true}) }, 8*time.Second)
	e.ExecuteWorkflow(CrawlWorkflow, CrawlInput{Spec: crawl.Spec{Name: "slow", Seeds: []string{"http://a.test/"}}})
	p := e.result(t)
	if len(got) != 2 || got[0].CrawlID != "slow" || got[0].Throttle.Delay.D() != 5*time.Second || !got[1].Throttle.Reset {
		t.Errorf("throttle controls %+v", got)
	}
	if p.State != crawl.CrawlDone {
		t.Errorf("ended %q", p.State)
	}
	if n := len(p.Controls); n != 2 || p.Controls[0].Signal != crawl.SignalThrottle {
		t.Errorf("progress controls %+v", p.Controls)
	}
}

// A crawl's budgets stop it as the stop signal does, its reason in its progress: its time at
// the moment it is spent (not a progress look later), its bytes at the first look after.
func TestCrawlBudgetsStopIt(t *testing.T) {
	e := newCrawlEnv(t, 24*time.Hour)
	e.ExecuteWorkflow(CrawlWorkflow, CrawlInput{Spec: crawl.Spec{Name: "c", Seeds: []string{"http://a.test/"},
		MaxDuration: crawl.Duration(17 * time.Second), RequestTimeout: crawl.Duration(time.Second)}})
	p := e.result(t)
	if p.State != crawl.CrawlStopped || p.StopReason != crawl.StopByDuration || !slices.Equal(e.states, []crawl.CrawlState{crawl.CrawlStopped}) {
		t.Fatalf("ended %q (%q), states %v; want stopped by its time budget", p.State, p.StopReason, e.states)
	}
	if at := e.stateAt[0]; at < 17*time.Second || at > 18*time.Second {
		t.Errorf("stopped %v after the start; want at its 17 s budget", at)
	}

	e = newCrawlEnv(t, 24*time.Hour)
	e.byteRate = 1000
	e.ExecuteWorkflow(CrawlWorkflow, CrawlInput{Spec: crawl.Spec{Name: "c", Seeds: []string{"http://a.test/"},
		MaxBytes: 12_000, RequestTimeout: crawl.Duration(time.Second)}})
	p = e.result(t)
	if p.State != crawl.CrawlStopped || p.StopReason != crawl.StopByBytes {
		t.Fatalf("ended %q (%q); want stopped by its byte budget", p.State, p.StopReason)
	}
	if at := e.stateAt[0]; at < 12*time.Second || at > 17*time.Second {
		t.Errorf("stopped %v after the start; want at the first look past 12,000 bytes (12 s)", at)
	}
}

// A running crawl's WARC update does not hold up its loop: while a slow one runs, the crawl
// still reads its progress (and keeps its processing children and answers its signals); the
// final write waits for it.
func TestASlowWARCUpdateDoesNotHoldTheCrawl(t *testing.T) {
	e := newCrawlEnvArchiving(t, 20*time.Minute, 10*time.Minute)
	e.ExecuteWorkflow(CrawlWorkflow, CrawlInput{Spec: crawl.Spec{Name: "c", Seeds: []string{"http://a.test/"}}})
	if p := e.result(t); p.State != crawl.CrawlDone {
		t.Fatalf("ended %q, want done", p.State)
	}
	if len(e.archives) < 2 || e.archives[0] || !e.archives[len(e.archives)-1] {
		t.Fatalf("WARC writes %v: want updates, then the final one", e.archives)
	}
	// The first update starts at the archiveEvery-th look and takes 10 minutes.
	looksDuring := 0
	first := e.looks[archiveEvery-1]
	for _, at := range e.looks {
		if at > first+time.Minute && at < first+9*time.Minute {
			looksDuring++
		}
	}
	if looksDuring < 10 {
		t.Errorf("%d progress reads while the first WARC update ran (looks at %v): the loop waited for it", looksDuring, e.looks)
	}
}

// A crawl's two processing children are staggered: the first pair ends half a run apart, and
// from then on one is always processing while the other hands over (on a busy server a
// handover took minutes, and two ending together left the fetched pages waiting).
func TestCrawlProcessingChildrenAreStaggered(t *testing.T) {
	e := newCrawlEnv(t, 2*crawlProcessFor+time.Minute)
	e.ExecuteWorkflow(CrawlWorkflow, CrawlInput{Spec: crawl.Spec{Name: "c", Seeds: []string{"http://a.test/"}}})
	e.result(t)
	if len(e.procs) < 4 {
		t.Fatalf("processing children %+v: want the first pair and their successors", e.procs)
	}
	// The test environment runs the two children on their own goroutines, so either may
	// register first: the pair is checked in the order of their runs.
	first := []procRun{e.procs[0], e.procs[1]}
	if first[0].runFor > first[1].runFor {
		first[0], first[1] = first[1], first[0]
	}
	if p := first; p[0].at != 0 || p[1].at != 0 || p[0].runFor != crawlProcessFor/2 || p[1].runFor != crawlProcessFor {
		t.Errorf("first pair %+v: want both at the start, one for half a run (%v), one for a run", p[:2], crawlProcessFor/2)
	}
	for _, p := range e.procs[2:] {
		if p.runFor != crawlProcessFor {
			t.Errorf("successor %+v: want a whole run", p)
		}
	}
	// Every end while the crawl runs leaves another child running, started before it.
	for i, p := range e.procs {
		if p.ended == 0 || p.ended >= e.finalAt {
			continue
		}
		covered := false
		for j, q := range e.procs {
			if j != i && q.at < p.ended && (q.ended == 0 || q.ended > p.ended) {
				covered = true
			}
		}
		if !covered {
			t.Errorf("child %d ended at %v with no other running: %+v", i, p.ended, e.procs)
		}
	}
}
