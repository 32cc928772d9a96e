package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/trawlerdev/trawler/activities"
	"github.com/trawlerdev/trawler/internal/clock"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/pacing"
)

// leaseOwner is the claim owner of this run's next fetch lease.
func (h *hostRun) leaseOwner() string {
	return crawl.LeaseOwner(workflow.GetInfo(h.ctx).WorkflowExecution.RunID, h.leases)
}

// fetch runs one fetch lease, which claims the host's URLs itself, and folds its outcome into
// the host state. It returns the lease's result, and false when the lease failed or was
// cancelled.
func (h *hostRun) fetch() (activities.FetchLeaseResult, bool) {
	if window := h.localLeaseFor(); window > 0 {
		if res, ok, ran := h.fetchLocal(window); ran {
			return res, ok
		}
	}
	ctx := h.ctx
	h.owner = h.leaseOwner()
	d := h.delay()
	in := h.leaseInput(d)
	timeout := h.leaseTimeout(in, d)
	actx, cancel := workflow.WithCancel(ctx)
	h.waitFor(fmt.Sprintf("fetch lease %d to end", h.leases+1))
	actx = workflow.WithActivityOptions(actx, workflow.ActivityOptions{
		// What the UI lists for the activity: the host, the due URLs it claims, its pacing.
		Summary:             fmt.Sprintf("%s · lease %d · due URLs, up to %d a claim · delay %s", h.in.Host, h.leases+1, in.Chunk, d),
		TaskQueue:           or(h.cfg.FetchQueue, crawl.FetchQueue),
		StartToCloseTimeout: timeout,
		HeartbeatTimeout:    fetchHeartbeatTimeout,
		WaitForCancellation: true, // one lease at a time: never overlap requests to the host
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    2 * time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    2 * time.Minute,
			MaximumAttempts:    10,
		},
	})
	var f *activities.Fetcher
	fut := workflow.ExecuteActivity(actx, f.FetchBatch, in)
	h.busy = true
	h.leases++
	h.interrupted = false
	for done := false; !done; {
		sel := workflow.NewSelector(ctx)
		sel.AddFuture(fut, func(workflow.Future) { done = true })
		h.addSignals(sel)
		sel.Select(ctx)
		if !done && h.interrupted {
			cancel() // pause or throttle: stop after the current request, release the rest
			h.interrupted = false
			h.tellLease()
		}
	}
	h.busy = false
	var res activities.FetchLeaseResult
	err := fut.Get(ctx, &res)
	if err != nil {
		h.abandon()
		if !temporal.IsCanceledError(err) {
			h.st.LastError = crawl.ClipError(err.Error()) // kept in the workflow's state and its next run's input
			h.st.Errors++
			h.backoff(workflow.Now(ctx))
		}
		h.st.NextRequestAt = clock.Later(h.st.NextRequestAt, workflow.Now(ctx).Add(d))
		return res, false
	}
	h.apply(res, d)
	return res, true
}

// leaseInput is the next lease's input at delay d: the host's pacing, its claims' size and
// lifetime, and its owner (h.owner, set by the caller).
func (h *hostRun) leaseInput(d time.Duration) activities.FetchLeaseInput {
	return activities.FetchLeaseInput{Host: h.in.Host, Delay: d, MaxCrawlDelay: h.cfg.MaxCrawlDelay.D(),
		NotBefore: h.st.NextRequestAt, Concurrency: h.concurrency(), Chunk: h.chunkSize(), ClaimTTL: h.claimTTL(),
		Owner: h.owner, LeaseFor: h.cfg.FetchLease.D()}
}

// leaseTimeout bounds one attempt of lease in: a chunk's requests, the last ones' timeouts and
// a wait for a slot, on top of the lease (a longer Crawl-delay ends the lease and is this
// workflow's timer), and robots.txt's redirect hops, each a delay apart (they wait in the
// lease).
func (h *hostRun) leaseTimeout(in activities.FetchLeaseInput, d time.Duration) time.Duration {
	return time.Duration(in.Chunk)*(d+h.cfg.RequestTimeout.D()) + 2*(h.cfg.RequestTimeout.D()+pacing.InLeaseWait) +
		5*d + time.Minute + in.LeaseFor
}

// tellLease tells the running lease, through Postgres, that its host was paused or throttled.
// The cancel this workflow task asks for reaches a lease only in a heartbeat's response, and a
// lease beats every 20 s (each beat is a write of this workflow's state); told, it beats
// moments later, when the cancel is on the server, and stops within about a second. Best
// effort: untold, the lease stops at its next beat.
func (h *hostRun) tellLease() {
	ctx := h.ctx
	if h.revision() < 6 && !rev5LeaseTold(ctx) {
		return
	}
	// The cancel goes to the server when this workflow task completes, after the tell: a slow
	// Postgres must not hold it back long.
	lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: 2 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
	})
	var fr *activities.Frontier
	if err := workflow.ExecuteLocalActivity(lctx, fr.TellLease, h.in.Host).Get(ctx, nil); err != nil {
		workflow.GetLogger(ctx).Warn("telling the lease of a pause or throttle failed; it stops at its next heartbeat", "host", h.in.Host, "error", err)
	}
}

// abandon hands back the claims of a lease that was cancelled or failed for good; the pages
// it fetched stay fetched for the crawl's processing.
func (h *hostRun) abandon() {
	ctx := h.ctx
	var fr *activities.Frontier
	in := activities.AbandonInput{Host: h.in.Host, Owners: crawl.LeaseOwners(h.owner)}
	if err := workflow.ExecuteLocalActivity(withLocal(ctx), fr.Abandon, in).Get(ctx, nil); err != nil {
		workflow.GetLogger(ctx).Error("handing back an abandoned lease failed; its claims expire", "host", h.in.Host, "error", err)
	}
}
