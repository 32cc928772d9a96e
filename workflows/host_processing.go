// Serves only host workflows of revision < 3 (crawl.HostRevision): their processing children
// per fetch lease. From revision 3 on, a crawl's processing children claim fetched pages
// (crawl_processing.go). Kept so running histories replay (replay_test.go).

package workflows

import (
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/workflow"

	"github.com/trawlerdev/trawler/activities"
	"github.com/trawlerdev/trawler/internal/crawl"
)

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

// process hands fetched pages to a ProcessPage child, abandoned on close so Continue-As-New
// does not cancel it; it waits only until the child has started.
func (h *hostRun) process(pages []crawl.PageRef) {
	h.startProcessing(crawl.ProcessInput{Host: h.in.Host, Pages: pages, TaskQueue: h.cfg.ProcessQueue})
}

// processLease starts the processing child of the fetch lease about to run (owner h.owner):
// it processes the lease's pages as they are fetched and ends after the lease.
func (h *hostRun) processLease(leaseFor time.Duration) {
	h.startProcessing(crawl.ProcessInput{Host: h.in.Host, TaskQueue: h.cfg.ProcessQueue,
		Lease: &crawl.LeaseRef{Owner: h.owner, Owners: activities.LeaseOwners(h.owner), For: leaseFor}})
}

func (h *hostRun) startProcessing(in crawl.ProcessInput) {
	h.st.ProcessSeq++
	info := workflow.GetInfo(h.ctx)
	cctx := workflow.WithChildOptions(h.ctx, workflow.ChildWorkflowOptions{
		WorkflowID:        crawl.HostProcessID(h.in.Host, info.OriginalRunID, h.st.ProcessSeq),
		ParentClosePolicy: enumspb.PARENT_CLOSE_POLICY_ABANDON,
		TaskQueue:         info.TaskQueueName,
	})
	child := workflow.ExecuteChildWorkflow(cctx, ProcessPageWorkflow, in)
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
