package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/trawlerdev/trawler/internal/clock"
	"github.com/trawlerdev/trawler/internal/crawl"
)

// Defaults of the host workflow's pacing, for fields a HostConfig leaves zero.
const (
	defaultMaxHistory    = 3000
	defaultMaxRunBatches = 150
	claimTTLSlack        = 2 * time.Minute
	// fetchHeartbeatTimeout is how long a fetch lease may go without a heartbeat before
	// Temporal retries it elsewhere: leases heartbeat every crawl.LeaseBeatEvery whatever
	// they are doing, so a dead fetch worker's hosts move on within this.
	fetchHeartbeatTimeout = 30 * time.Second
)

// HostWorkflow is the one workflow that requests pages from its host (ID host/<authority>),
// for every crawl: one-running-execution-per-ID makes it the cluster-wide politeness lock.
// It loops: wait on a durable timer while the host's next request is more than
// pacing.InLeaseWait away (a backoff, a long Crawl-delay, the next due URL), then run one fetch lease, an
// activity that claims the host's due URLs a chunk at a time, paces every request itself
// (robots.txt first when its cache expired) and ends after FetchLease or when the host runs
// dry. Fetched pages are claimed by the crawl's processing children (crawl_processing.go), so
// the host starts none. A dry host with nothing to keep ends at once; admission starts it
// again (Signal-With-Start) when its next URLs come.
//
// This is the live revision's code (crawl.WorkflowRevision); see doc.go for how revisions are
// kept, carried over and deleted.
func HostWorkflow(ctx workflow.Context, in crawl.HostInput) error {
	h := &hostRun{ctx: ctx, in: in, st: in.State, cfg: withHostDefaults(in.Config)}
	return h.run()
}

type hostRun struct {
	ctx   workflow.Context
	in    crawl.HostInput
	st    crawl.HostState
	cfg   crawl.HostConfig
	state crawl.HostPhase // the HostState search attribute
	wake  time.Time
	busy  bool
	// waiting says what the host waits for, in the UI's current details (describe).
	waiting string
	leases  int    // fetch leases in this run
	owner   string // claim owner of the lease being run
	// localFailed says a local lease failed in this run: the rest are activity leases.
	localFailed bool

	urlsAdded, pause, resume, throttle workflow.ReceiveChannel
	interrupted                        bool // a pause or throttle arrived while fetching
}

func withHostDefaults(c crawl.HostConfig) crawl.HostConfig {
	out := c.WithDefaults()
	if out.MaxHistory <= 0 {
		out.MaxHistory = defaultMaxHistory
	}
	if out.MaxRunBatches <= 0 {
		out.MaxRunBatches = defaultMaxRunBatches
	}
	return out
}

func (h *hostRun) run() error {
	ctx := h.ctx
	h.urlsAdded = workflow.GetSignalChannel(ctx, crawl.SignalURLsAdded)
	h.pause = workflow.GetSignalChannel(ctx, crawl.SignalPause)
	h.resume = workflow.GetSignalChannel(ctx, crawl.SignalResume)
	h.throttle = workflow.GetSignalChannel(ctx, crawl.SignalThrottle)
	if err := workflow.SetQueryHandler(ctx, crawl.QueryStatus, func() (crawl.HostStatus, error) { return h.status(), nil }); err != nil {
		return err
	}
	// The HostState it was started (or continued) with is already set (none for a run started
	// by hand: the first setState sets it).
	state, _ := workflow.GetTypedSearchAttributes(ctx).GetKeyword(crawl.SearchHostState)
	h.state = crawl.HostPhase(state)
	for {
		h.drainSignals()
		if h.shouldContinueAsNew() {
			return h.continueAsNew()
		}
		if h.st.Paused {
			h.setState(crawl.HostPaused)
			h.waitFor("a resume signal")
			h.waitSignal(time.Time{}, false)
			continue
		}
		now := workflow.Now(ctx)
		if gate := clock.Later(h.st.NextRequestAt, h.st.BackoffUntil); gate.After(now) && !h.waitInLease(gate.Sub(now)) {
			if h.st.BackoffUntil.After(now) {
				h.setState(h.backoffState())
				h.waitFor(fmt.Sprintf("its backoff to end at %s (level %d)", clockTime(gate), h.st.BackoffLevel))
			} else {
				h.waitFor("its next request slot at " + clockTime(gate) + " (the delay, on a durable timer)")
			}
			h.waitSignal(gate, false) // the durable crawl-delay timer
			continue
		}
		h.setState(crawl.HostActive)
		if res, ok := h.fetch(); ok && res.Dry && !h.idle(res.NextDue) {
			return nil
		}
	}
}

// idle waits for work: until the next due URL (if any) or a signal, at most the idle timeout.
// It returns false when the workflow should end.
func (h *hostRun) idle(nextDue *time.Time) bool {
	now := workflow.Now(h.ctx)
	deadline := now.Add(h.cfg.IdleTimeout.D())
	if nextDue != nil && nextDue.Before(deadline) {
		h.setState(crawl.HostActive)
		h.waitFor("its next due URL at " + clockTime(*nextDue))
		h.waitSignal(clock.Later(*nextDue, now.Add(time.Second)), true)
		return true
	}
	if h.plain() {
		// Nothing to wait for and nothing to keep: end now rather than idle out the timeout
		// (a timer, its task and two state upserts for most hosts of a real web). Admission
		// starts the host again when its next URLs come (its last claim left it waiting), and
		// its pacing lives on in Postgres.
		return h.drainSignals()
	}
	h.setState(crawl.HostIdle)
	h.waitFor("new URLs until " + clockTime(deadline) + ", then it ends")
	if h.waitSignal(deadline, true) {
		return true
	}
	// Timed out. A signal that raced the timer still wakes us (the server refuses to complete
	// a workflow with unhandled signals, and the next task finds it here).
	return h.drainSignals()
}

// plain says whether the host holds nothing a new run would not start with: no pause,
// throttle or backoff.
func (h *hostRun) plain() bool {
	st := h.st
	return !st.Paused && st.ThrottleDelay == 0 && st.ThrottleConcurrent == 0 && st.BackoffLevel == 0 &&
		st.ConsecutiveErrors == 0 && !st.BackoffUntil.After(workflow.Now(h.ctx))
}

func (h *hostRun) shouldContinueAsNew() bool {
	info := workflow.GetInfo(h.ctx)
	return info.GetContinueAsNewSuggested() || info.GetCurrentHistoryLength() >= h.cfg.MaxHistory ||
		h.leases >= h.cfg.MaxRunBatches
}

// continueAsNew carries the state into a fresh run once no signal is pending.
func (h *hostRun) continueAsNew() error {
	_ = workflow.Await(h.ctx, func() bool { return workflow.AllHandlersFinished(h.ctx) })
	h.drainSignals()
	h.st.Runs++
	next := crawl.HostInput{Host: h.in.Host, Config: h.cfg, State: h.st, Revision: crawl.WorkflowRevision}
	// A run started on the crawls' queue before hosts had their own moves to the hosts' as it
	// continues (crawl.HostQueue; which queue a run continues on is not replayed).
	return workflow.NewContinueAsNewError(workflow.WithWorkflowTaskQueue(h.ctx, crawl.OnHostQueue(workflow.GetInfo(h.ctx).TaskQueueName)), HostWorkflow, next)
}
