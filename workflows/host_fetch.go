package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/trawlerdev/trawler/activities"
	"github.com/trawlerdev/trawler/internal/clock"
	"github.com/trawlerdev/trawler/internal/crawl"
)

// batchOwner is the claim owner of this run's next batch.
func (h *hostRun) batchOwner() string {
	return crawl.BatchOwner(workflow.GetInfo(h.ctx).WorkflowExecution.RunID, h.batches)
}

func (h *hostRun) claim(expecting bool) (activities.ClaimResult, error) {
	var f *activities.Frontier
	var res activities.ClaimResult
	// Owned by this run's next batch: replayed after a worker died between claiming and
	// recording the claim, the local activity takes the same URLs back.
	h.owner = h.batchOwner()
	err := workflow.ExecuteLocalActivity(withLocal(h.ctx), f.Claim, activities.ClaimInput{Host: h.in.Host, Limit: h.batchSize(),
		ClaimTTL: h.claimTTL(), Owner: h.owner, Expecting: expecting}).Get(h.ctx, &res)
	return res, err
}

// fetch runs one fetch activity for urls (a lease claims its own when there are none) and
// folds its outcome into the host state. It returns the activity's result, and false when the
// activity failed or was cancelled.
func (h *hostRun) fetch(urls []crawl.Claimed) (activities.FetchBatchResult, bool) {
	ctx := h.ctx
	if h.selfClaim {
		h.owner = h.batchOwner()
	}
	d := h.delay()
	k := max(len(urls), h.batchSize()) // the batch tops itself up to K
	in := activities.FetchBatchInput{Host: h.in.Host, URLs: urls, Delay: d,
		MaxCrawlDelay: h.cfg.MaxCrawlDelay.D(), NotBefore: h.st.NextRequestAt, Concurrency: h.concurrency(),
		TopUp: h.batchSize(), Window: h.cfg.BatchWindow.D(), ClaimTTL: h.claimTTL(), Owner: h.owner}
	timeout := time.Duration(k)*(d+h.cfg.RequestTimeout.D()) + 2*(h.cfg.RequestTimeout.D()+h.cfg.MaxCrawlDelay.D()) + time.Minute
	if h.leases {
		// The lease's processing child starts with it (its start command goes out in the
		// same workflow task) and takes the pages as they are fetched.
		in.LeaseFor = h.cfg.FetchLease.D()
		timeout += in.LeaseFor
		if h.crawlProcessed {
			in.NoLeaseRow, in.SelfClaim = true, h.selfClaim
		} else {
			h.processLease(in.LeaseFor)
		}
	}
	actx, cancel := workflow.WithCancel(ctx)
	actx = workflow.WithActivityOptions(actx, workflow.ActivityOptions{
		TaskQueue:           or(h.cfg.FetchQueue, crawl.FetchQueue),
		StartToCloseTimeout: timeout,
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
	fut := workflow.ExecuteActivity(actx, f.FetchBatch, in)
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
		h.st.NextRequestAt = clock.Later(h.st.NextRequestAt, workflow.Now(ctx).Add(d))
		return res, false
	}
	h.apply(res, d)
	if len(res.Pages) > 0 && !h.crawlProcessed {
		h.process(res.Pages)
	}
	return res, true
}

// abandon hands back what a batch that was cancelled or failed for good holds: its claims,
// top-ups included, go back to the queue and the pages it fetched go to processing.
func (h *hostRun) abandon(urls []crawl.Claimed) {
	ctx := h.ctx
	var fr *activities.Frontier
	if workflow.GetVersion(ctx, "abandon-by-owner", workflow.DefaultVersion, 1) == 1 {
		var pages []crawl.PageRef
		in := activities.AbandonInput{Host: h.in.Host, URLs: urls, Owners: activities.LeaseOwners(h.owner)}
		if h.leases {
			in.Lease = h.owner
		}
		if err := workflow.ExecuteLocalActivity(withLocal(ctx), fr.Abandon, in).Get(ctx, &pages); err != nil {
			workflow.GetLogger(ctx).Error("handing back an abandoned batch failed; its leases and the crawl's sweep will", "host", h.in.Host, "error", err)
		} else if len(pages) > 0 && !h.crawlProcessed {
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
