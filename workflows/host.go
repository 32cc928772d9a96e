package workflows

import (
	"fmt"
	"hash/fnv"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/trawlerdev/trawler/activities"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/metrics"
	"github.com/trawlerdev/trawler/internal/store"
)

// Defaults of the host workflow's pacing, for fields a HostConfig leaves zero.
const (
	defaultMaxHistory    = 3000
	defaultMaxRunBatches = 150
	claimLeaseSlack      = 2 * time.Minute
	// inBatchWait is the longest wait for the host's next slot that the next fetch batch takes
	// over (it books its slots in Postgres and sleeps until NotBefore anyway): a durable timer
	// per batch would cost two events and a workflow task for a second's crawl-delay. Longer
	// waits (a large Crawl-delay, backoff, the next due URL) stay durable timers.
	inBatchWait = 5 * time.Second
	// processingWait bounds how long a host that ran dry waits for its own processing children
	// (whose links usually are its next URLs) before it goes idle and waits for a signal.
	processingWait = time.Minute
	// fetchHeartbeatTimeout is how long a fetch batch may go without a heartbeat before
	// Temporal retries it elsewhere: batches heartbeat every few seconds whatever they are doing
	// (activities.heartbeatEvery), so a dead fetch worker's hosts move on within this.
	fetchHeartbeatTimeout = 20 * time.Second
)

// HostWorkflow is the one workflow that requests pages from its host (ID host/<authority>),
// for every crawl: one-running-execution-per-ID makes it the cluster-wide politeness lock.
// It loops: claim due URLs from Postgres, wait on a durable timer until the host's next
// request may start, run one Fetch activity for the batch (which spaces its requests by the
// same delay and fetches robots.txt first when its cache expired), hand fetched pages to a
// ProcessPage child, and repeat. Idle, it sleeps until the next due URL or a signal, and ends
// after the idle timeout (Signal-With-Start revives it).
func HostWorkflow(ctx workflow.Context, in crawl.HostInput) error {
	h := &hostRun{ctx: ctx, in: in, st: in.State, cfg: withHostDefaults(in.Config)}
	return h.run()
}

type hostRun struct {
	ctx     workflow.Context
	in      crawl.HostInput
	st      crawl.HostState
	cfg     crawl.HostConfig
	state   string // active, idle, paused, backoff: the HostState search attribute
	wake    time.Time
	busy    bool
	batches int // fetch batches in this run
	// amortised (version "amortised-batches"): short crawl-delay waits inside the next batch,
	// processing children started without a workflow task of their own.
	amortised bool
	// processing: this run's processing children not known to be complete (amortised). While
	// there are, an empty claim waits for them (their completion wakes the workflow anyway)
	// instead of leaving the host to be signalled by their admissions; before the run closes,
	// their starts are awaited.
	processing []workflow.ChildWorkflowFuture
	owner      string // claim owner of the batch being claimed and fetched

	urlsAdded, pause, resume, throttle workflow.ReceiveChannel
	interrupted                        bool // a pause or throttle arrived while fetching
}

func withHostDefaults(c crawl.HostConfig) crawl.HostConfig {
	d := crawl.Spec{Delay: c.Delay, MaxCrawlDelay: c.MaxCrawlDelay, Concurrency: c.Concurrency, BatchWindow: c.BatchWindow,
		MaxBatch: c.MaxBatch, HostIdleTimeout: c.IdleTimeout, RequestTimeout: c.RequestTimeout}.WithDefaults()
	out := crawl.HostConfigFrom(d)
	out.MaxHistory, out.MaxRunBatches, out.FetchQueue, out.ProcessQueue = c.MaxHistory, c.MaxRunBatches, c.FetchQueue, c.ProcessQueue
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
	if h.in.Revision >= 1 {
		// Started by code of this revision: amortised, and the HostState it was started (or
		// continued) with is already set.
		h.amortised = true
		h.state, _ = workflow.GetTypedSearchAttributes(ctx).GetKeyword(activities.SearchHostState)
	} else {
		h.amortised = workflow.GetVersion(ctx, "amortised-batches", workflow.DefaultVersion, 1) == 1
	}
	defer h.awaitChildStarts()
	for {
		h.drainSignals()
		if h.shouldContinueAsNew() {
			return h.continueAsNew()
		}
		if h.st.Paused {
			h.setState("paused")
			h.waitSignal(time.Time{}, false)
			continue
		}
		now := workflow.Now(ctx)
		if gate := later(h.st.NextRequestAt, h.st.BackoffUntil); gate.After(now) && !h.waitInBatch(gate.Sub(now)) {
			if h.st.BackoffUntil.After(now) {
				h.setState(h.backoffState())
			}
			h.waitSignal(gate, false) // the durable crawl-delay timer
			continue
		}
		expecting := h.expectingLinks()
		claimed, err := h.claim(expecting)
		if err != nil {
			return err
		}
		if len(claimed.URLs) == 0 {
			if expecting {
				h.awaitProcessing(claimed.NextDue)
				continue
			}
			if h.idle(claimed.NextDue) {
				continue
			}
			return nil
		}
		h.setState("active")
		h.fetch(claimed.URLs)
	}
}

// waitInBatch says whether the next batch may wait out the gap itself (its NotBefore).
func (h *hostRun) waitInBatch(gap time.Duration) bool {
	return h.amortised && gap <= inBatchWait && !h.st.BackoffUntil.After(workflow.Now(h.ctx))
}

// delay is the gap between request starts in force: the crawl's, robots.txt's Crawl-delay
// (capped) or the operator's throttle, whichever is longest.
func (h *hostRun) delay() time.Duration {
	return max(h.cfg.Delay.D(), h.st.CrawlDelay.D(), h.st.ThrottleDelay.D())
}

// concurrency is how many requests may be in flight: the crawl's, or fewer under throttle.
func (h *hostRun) concurrency() int {
	n := max(h.cfg.Concurrency, 1)
	if t := h.st.ThrottleConcurrent; t > 0 && t < n {
		n = t
	}
	return n
}

// batchSize is K: how many URLs one Fetch activity carries, so that it covers about one
// batch window of host time.
func (h *hostRun) batchSize() int {
	d := h.delay()
	k := h.cfg.MaxBatch
	if d > 0 {
		k = int(h.cfg.BatchWindow.D() / d)
	}
	return min(max(k, 1), h.cfg.MaxBatch)
}

func (h *hostRun) claim(expecting bool) (activities.ClaimResult, error) {
	var f *activities.Frontier
	var res activities.ClaimResult
	// Owned by this run's next batch: replayed after a worker died between claiming and
	// recording the claim, the local activity takes the same URLs back.
	h.owner = fmt.Sprintf("host:%s/%d", workflow.GetInfo(h.ctx).WorkflowExecution.RunID, h.batches)
	err := workflow.ExecuteLocalActivity(withLocal(h.ctx), f.Claim, activities.ClaimInput{Host: h.in.Host, Limit: h.batchSize(),
		Lease: h.lease(), Owner: h.owner, Expecting: expecting}).Get(h.ctx, &res)
	return res, err
}

// expectingLinks says whether processing children of this run are still running.
func (h *hostRun) expectingLinks() bool {
	if !h.amortised {
		return false
	}
	running := h.processing[:0]
	for _, f := range h.processing {
		if f.IsReady() {
			h.childStarted(f) // done: only a failed start is news
		} else {
			running = append(running, f)
		}
	}
	h.processing = running
	return len(running) > 0
}

// awaitProcessing waits, still active, until a processing child completes (its links are
// admitted by then), a signal, the next due URL or at most processingWait: a child retrying
// for long must not keep the host from URLs other hosts admit for it.
func (h *hostRun) awaitProcessing(nextDue *time.Time) {
	now := workflow.Now(h.ctx)
	wait := processingWait
	if nextDue != nil {
		wait = min(wait, max(nextDue.Sub(now), time.Second))
	}
	children := make([]workflow.Future, len(h.processing))
	for i, f := range h.processing {
		children[i] = f
	}
	h.waitSignal(now.Add(wait), true, children...)
}

// lease is how long a batch's claims last: the whole batch, K requests at the delay each
// taking up to the request timeout, and some slack.
func (h *hostRun) lease() time.Duration {
	return time.Duration(h.batchSize())*(h.delay()+h.cfg.RequestTimeout.D()) + claimLeaseSlack
}

// idle waits for work: until the next due URL (if any) or a signal, at most the idle timeout.
// It returns false when the workflow should end.
func (h *hostRun) idle(nextDue *time.Time) bool {
	now := workflow.Now(h.ctx)
	deadline := now.Add(h.cfg.IdleTimeout.D())
	if nextDue != nil && nextDue.Before(deadline) {
		h.setState("active")
		h.waitSignal(later(*nextDue, now.Add(time.Second)), true)
		return true
	}
	h.setState("idle")
	if h.waitSignal(deadline, true) {
		return true
	}
	// Timed out. A signal that raced the timer still wakes us (the server refuses to complete
	// a workflow with unhandled signals, and the next task finds it here).
	h.awaitChildStarts()
	return h.drainSignals()
}

func (h *hostRun) fetch(urls []store.Claimed) {
	ctx := h.ctx
	d := h.delay()
	k := max(len(urls), h.batchSize()) // the batch tops itself up to K
	actx, cancel := workflow.WithCancel(ctx)
	actx = workflow.WithActivityOptions(actx, workflow.ActivityOptions{
		TaskQueue:           or(h.cfg.FetchQueue, defaultFetchQueue),
		StartToCloseTimeout: time.Duration(k)*(d+h.cfg.RequestTimeout.D()) + 2*(h.cfg.RequestTimeout.D()+h.cfg.MaxCrawlDelay.D()) + time.Minute,
		HeartbeatTimeout:    fetchHeartbeatTimeout,
		WaitForCancellation: true, // one batch at a time: never overlap requests to the host
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    2 * time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    2 * time.Minute,
			MaximumAttempts:    10,
		},
	})
	var f *activities.Fetcher
	fut := workflow.ExecuteActivity(actx, f.FetchBatch, activities.FetchBatchInput{Host: h.in.Host, URLs: urls, Delay: d,
		MaxCrawlDelay: h.cfg.MaxCrawlDelay.D(), NotBefore: h.st.NextRequestAt, Concurrency: h.concurrency(),
		TopUp: h.batchSize(), Window: h.cfg.BatchWindow.D(), Lease: h.lease(), Owner: h.owner})
	h.busy = true
	h.batches++
	h.interrupted = false
	for done := false; !done; {
		sel := workflow.NewSelector(ctx)
		sel.AddFuture(fut, func(workflow.Future) { done = true })
		h.addSignals(sel)
		sel.Select(ctx)
		if !done && h.interrupted {
			cancel() // pause or throttle: stop after the current request, release the rest
			h.interrupted = false
		}
	}
	h.busy = false
	var res activities.FetchBatchResult
	err := fut.Get(ctx, &res)
	if err != nil {
		h.abandon(urls)
		if !temporal.IsCanceledError(err) {
			h.st.LastError = err.Error()
			h.st.Errors++
			h.backoff(workflow.Now(ctx))
		}
		h.st.NextRequestAt = later(h.st.NextRequestAt, workflow.Now(ctx).Add(d))
		return
	}
	h.apply(res, d)
	if len(res.Pages) > 0 {
		h.process(res.Pages)
	}
}

// abandon hands back what a batch that was cancelled or failed for good holds: its claims,
// top-ups included, go back to the queue and the pages it fetched go to processing.
func (h *hostRun) abandon(urls []store.Claimed) {
	ctx := h.ctx
	var fr *activities.Frontier
	if workflow.GetVersion(ctx, "abandon-by-owner", workflow.DefaultVersion, 1) == 1 {
		var pages []crawl.PageRef
		in := activities.AbandonInput{Host: h.in.Host, URLs: urls, Owners: []string{h.owner, activities.TopUpOwner(h.owner)}}
		if err := workflow.ExecuteLocalActivity(withLocal(ctx), fr.Abandon, in).Get(ctx, &pages); err != nil {
			workflow.GetLogger(ctx).Error("handing back an abandoned batch failed; its leases and the crawl's sweep will", "host", h.in.Host, "error", err)
		} else if len(pages) > 0 {
			h.process(pages)
		}
		return
	}
	// Before abandon-by-owner: the batch's own URLs only (top-ups wait for their lease).
	if rerr := workflow.ExecuteLocalActivity(withLocal(ctx), fr.Release, urls).Get(ctx, nil); rerr != nil {
		workflow.GetLogger(ctx).Error("release claims failed; their leases will expire", "host", h.in.Host, "error", rerr)
	}
	// Pages the batch fetched before it stopped still go to processing.
	if workflow.GetVersion(ctx, "process-interrupted-batch", workflow.DefaultVersion, 1) == 1 {
		var pages []crawl.PageRef
		if perr := workflow.ExecuteLocalActivity(withLocal(ctx), fr.FetchedOf, urls).Get(ctx, &pages); perr != nil {
			workflow.GetLogger(ctx).Error("finding the batch's fetched pages failed; the crawl's sweep will", "host", h.in.Host, "error", perr)
		} else if len(pages) > 0 {
			h.process(pages)
		}
	}
}

// apply folds a batch's outcome into the host state: pacing, Retry-After, error backoff.
func (h *hostRun) apply(res activities.FetchBatchResult, d time.Duration) {
	defer h.describe()
	now := workflow.Now(h.ctx)
	h.st.CrawlDelay, h.st.CrawlDelayCapped = crawl.Duration(res.CrawlDelay), res.CrawlDelayCapped
	if !res.LastRequestAt.IsZero() {
		h.st.LastRequestAt = res.LastRequestAt
		h.st.NextRequestAt = later(h.st.NextRequestAt, res.LastRequestAt.Add(max(d, h.delay())))
	}
	h.st.Fetched += int64(res.Fetched + res.NotModified)
	h.st.Errors += int64(res.Errors)
	h.st.Skipped += int64(res.Skipped)
	if res.LastError != "" {
		h.st.LastError = res.LastError
	}
	if res.DeferUntil.After(h.st.BackoffUntil) {
		h.st.BackoffUntil = res.DeferUntil
	}
	switch {
	case res.ConsecutiveErrors > 0 && res.Fetched+res.NotModified == 0:
		h.st.ConsecutiveErrors += res.ConsecutiveErrors
		if h.st.ConsecutiveErrors >= 3 {
			h.backoff(now)
		}
	case res.Fetched+res.NotModified > 0:
		h.st.ConsecutiveErrors = 0
		if h.st.BackoffLevel > 0 {
			h.st.BackoffLevel-- // decays after successes
		}
	}
}

// backoff defers the host exponentially: 2^level × max(delay, 1s), ±20% jitter, at most an
// hour. A host that reaches the top level is parked: it is tried once an hour, not hammered.
func (h *hostRun) backoff(now time.Time) {
	workflow.GetMetricsHandler(h.ctx).Counter(metrics.HostBackoffs).Inc(1) // replay-safe: counted once
	h.st.BackoffLevel = min(h.st.BackoffLevel+1, maxBackoffLevel)
	wait := min(max(h.delay(), time.Second)<<h.st.BackoffLevel, time.Hour)
	wait = time.Duration(float64(wait) * jitter(h.in.Host, h.st.BackoffLevel, h.st.Errors))
	if until := now.Add(wait); until.After(h.st.BackoffUntil) {
		h.st.BackoffUntil = until
	}
}

const maxBackoffLevel = 12

func (h *hostRun) backoffState() string {
	if h.st.BackoffLevel >= maxBackoffLevel {
		return "parked"
	}
	return "backoff"
}

// jitter is a factor in [0.8, 1.2) that spreads the retries of hosts failing together. It is
// derived from workflow state, so replays compute the same value.
func jitter(host string, level int, errors int64) float64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%d/%d", host, level, errors)
	return 0.8 + 0.4*float64(h.Sum64()%1000)/1000
}

// process hands fetched pages to a ProcessPage child, abandoned on close so Continue-As-New
// does not cancel it; it waits only until the child has started.
func (h *hostRun) process(pages []crawl.PageRef) {
	h.st.ProcessSeq++
	info := workflow.GetInfo(h.ctx)
	cctx := workflow.WithChildOptions(h.ctx, workflow.ChildWorkflowOptions{
		WorkflowID:        fmt.Sprintf("process/%s/%s-%d", h.in.Host, info.OriginalRunID, h.st.ProcessSeq),
		ParentClosePolicy: enumspb.PARENT_CLOSE_POLICY_ABANDON,
		TaskQueue:         info.TaskQueueName,
	})
	child := workflow.ExecuteChildWorkflow(cctx, ProcessPageWorkflow, crawl.ProcessInput{Host: h.in.Host, Pages: pages,
		TaskQueue: h.cfg.ProcessQueue})
	if !h.amortised {
		h.childStarted(child)
		return
	}
	// The start command goes out with the next batch's; the started event is awaited only
	// before this run closes (an abandoned child initiated but not started when its parent
	// closes is never started).
	h.processing = append(h.processing, child)
}

// childStarted waits until the child has started (or failed to).
func (h *hostRun) childStarted(child workflow.ChildWorkflowFuture) {
	if err := child.GetChildWorkflowExecution().Get(h.ctx, nil); err != nil {
		workflow.GetLogger(h.ctx).Error("start processing failed; pages stay fetched for the crawl's sweep", "error", err)
	}
}

// awaitChildStarts blocks until every processing child this run initiated has started.
func (h *hostRun) awaitChildStarts() {
	for _, f := range h.processing {
		h.childStarted(f)
	}
}

// waitSignal blocks until deadline (false; zero: no deadline), a control signal (pause,
// resume, throttle) or one of also (true). urls-added ends the wait only when wakeOnURLs is
// set (idle): waiting out the crawl-delay it is applied and the same timer goes on, so a busy
// host's wake-ups cost no timer churn.
func (h *hostRun) waitSignal(deadline time.Time, wakeOnURLs bool, also ...workflow.Future) bool {
	ctx := h.ctx
	h.wake = deadline
	tctx, cancel := workflow.WithCancel(ctx)
	defer cancel()
	var timer workflow.Future
	if !deadline.IsZero() {
		d := deadline.Sub(workflow.Now(ctx))
		if d <= 0 {
			return false
		}
		timer = workflow.NewTimer(tctx, d)
	}
	for {
		fired, urls := false, false
		sel := workflow.NewSelector(ctx)
		if timer != nil {
			sel.AddFuture(timer, func(workflow.Future) { fired = true })
		}
		for _, f := range also {
			sel.AddFuture(f, func(workflow.Future) {})
		}
		h.addControlSignals(sel)
		sel.AddReceive(h.urlsAdded, func(c workflow.ReceiveChannel, _ bool) { h.onURLsAdded(c); urls = true })
		sel.Select(ctx)
		switch {
		case fired:
			return false
		case urls && !wakeOnURLs && !h.shouldContinueAsNew():
			continue // (a long pause under a stream of wake-ups still continues as new)
		default:
			return true
		}
	}
}

func (h *hostRun) addSignals(sel workflow.Selector) {
	sel.AddReceive(h.urlsAdded, func(c workflow.ReceiveChannel, _ bool) { h.onURLsAdded(c) })
	h.addControlSignals(sel)
}

func (h *hostRun) addControlSignals(sel workflow.Selector) {
	sel.AddReceive(h.pause, func(c workflow.ReceiveChannel, _ bool) { c.Receive(h.ctx, nil); h.onPause() })
	sel.AddReceive(h.resume, func(c workflow.ReceiveChannel, _ bool) { c.Receive(h.ctx, nil); h.st.Paused = false })
	sel.AddReceive(h.throttle, func(c workflow.ReceiveChannel, _ bool) {
		var t crawl.Throttle
		c.Receive(h.ctx, &t)
		h.onThrottle(t)
	})
}

// drainSignals applies every pending signal without blocking; true if there was any.
func (h *hostRun) drainSignals() bool {
	any := false
	for {
		var t crawl.Throttle
		var added crawl.URLsAdded
		switch {
		case h.urlsAdded.ReceiveAsync(&added):
			h.merge(added)
		case h.pause.ReceiveAsync(nil):
			h.onPause()
		case h.resume.ReceiveAsync(nil):
			h.st.Paused = false
		case h.throttle.ReceiveAsync(&t):
			h.onThrottle(t)
		default:
			return any
		}
		any = true
	}
}

func (h *hostRun) onURLsAdded(c workflow.ReceiveChannel) {
	var s crawl.URLsAdded
	c.Receive(h.ctx, &s)
	h.merge(s)
}

// merge takes the politest pacing any crawl sharing the host asks for.
func (h *hostRun) merge(s crawl.URLsAdded) {
	if s.Config.Delay.D() > h.cfg.Delay.D() {
		h.cfg.Delay = s.Config.Delay
	}
	if c := s.Config.Concurrency; c > 0 && c < h.cfg.Concurrency {
		h.cfg.Concurrency = c
	}
	if h.cfg.FetchQueue == "" {
		h.cfg.FetchQueue, h.cfg.ProcessQueue = s.Config.FetchQueue, s.Config.ProcessQueue
	}
}

func (h *hostRun) onPause() {
	h.st.Paused = true
	if h.busy {
		h.interrupted = true
	}
}

func (h *hostRun) onThrottle(t crawl.Throttle) {
	if t.Reset {
		h.st.ThrottleDelay, h.st.ThrottleConcurrent = 0, 0
	}
	if t.Delay > 0 {
		h.st.ThrottleDelay = t.Delay
	}
	if t.Concurrency > 0 {
		h.st.ThrottleConcurrent = t.Concurrency
	}
	if h.busy && (t.Delay > 0 || t.Concurrency > 0 || t.Reset) {
		h.interrupted = true
	}
	// The next request keeps the new delay from the last one.
	if !h.st.LastRequestAt.IsZero() {
		h.st.NextRequestAt = later(h.st.NextRequestAt, h.st.LastRequestAt.Add(h.delay()))
	}
}

func (h *hostRun) setState(s string) {
	if s == h.state {
		return
	}
	h.state = s
	_ = workflow.UpsertTypedSearchAttributes(h.ctx, activities.SearchHostState.ValueSet(s))
	h.describe()
}

// describe sets the line the Temporal UI shows as the workflow's current details (metadata,
// not history: no command, so it never affects replay).
func (h *hostRun) describe() {
	d := fmt.Sprintf("**%s** · delay %s · fetched %d · errors %d · skipped %d", h.state, h.delay(), h.st.Fetched, h.st.Errors, h.st.Skipped)
	if h.st.Paused {
		d += " · paused by signal"
	}
	if h.st.LastError != "" {
		d += " · last error: " + h.st.LastError
	}
	workflow.SetCurrentDetails(h.ctx, d)
}

func (h *hostRun) status() crawl.HostStatus {
	st := crawl.HostStatus{Host: h.in.Host, State: h.state, Paused: h.st.Paused, Delay: h.delay().String(),
		CrawlDelay: h.st.CrawlDelay.D().String(), CrawlDelayCap: h.st.CrawlDelayCapped, Throttle: h.st.ThrottleDelay.D().String(),
		Concurrency: h.concurrency(), Fetched: h.st.Fetched, Errors: h.st.Errors, Skipped: h.st.Skipped, LastError: h.st.LastError,
		NextWake: h.wake, BackoffUntil: h.st.BackoffUntil, BackoffLevel: h.st.BackoffLevel,
		HistoryEvents: workflow.GetInfo(h.ctx).GetCurrentHistoryLength(), Runs: h.st.Runs}
	if h.busy {
		st.InFlight = 1
	}
	return st
}

func (h *hostRun) shouldContinueAsNew() bool {
	info := workflow.GetInfo(h.ctx)
	return info.GetContinueAsNewSuggested() || info.GetCurrentHistoryLength() >= h.cfg.MaxHistory ||
		h.batches >= h.cfg.MaxRunBatches
}

// continueAsNew carries the state into a fresh run once no signal is pending.
func (h *hostRun) continueAsNew() error {
	h.awaitChildStarts()
	_ = workflow.Await(h.ctx, func() bool { return workflow.AllHandlersFinished(h.ctx) })
	h.drainSignals()
	h.st.Runs++
	next := crawl.HostInput{Host: h.in.Host, Config: h.cfg, State: h.st, Revision: crawl.HostRevision}
	return workflow.NewContinueAsNewError(h.ctx, HostWorkflow, next)
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
