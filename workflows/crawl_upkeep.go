package workflows

import (
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/workflow"

	"github.com/trawlerdev/trawler/activities"
	"github.com/trawlerdev/trawler/internal/crawl"
)

// reprocess hands pages whose processing never finished (a ProcessPage workflow that failed
// for good) to a new ProcessPage workflow.
func reprocess(ctx workflow.Context, crawlID string, tick int) {
	var f *activities.Frontier
	var in crawl.ProcessInput
	if err := workflow.ExecuteLocalActivity(withLocal(ctx), f.StaleFetched, crawlID, reprocessAfter).Get(ctx, &in); err != nil {
		workflow.GetLogger(ctx).Warn("finding unprocessed pages failed", "crawl", crawlID, "error", err)
		return
	}
	if len(in.Pages) == 0 {
		return
	}
	info := workflow.GetInfo(ctx)
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:        crawl.ReprocessID(info.WorkflowExecution.ID, info.OriginalRunID, tick),
		ParentClosePolicy: enumspb.PARENT_CLOSE_POLICY_ABANDON,
	})
	child := workflow.ExecuteChildWorkflow(cctx, ProcessPageWorkflow, in)
	if err := child.GetChildWorkflowExecution().Get(ctx, nil); err != nil {
		workflow.GetLogger(ctx).Warn("starting reprocessing failed", "crawl", crawlID, "error", err)
	}
}

// wake starts or signals the crawl's hosts with due URLs that claimed nothing for staleFor.
func (c *crawlRun) wake(staleFor time.Duration) {
	if err := workflow.ExecuteLocalActivity(c.lctx, c.f.WakeStale, c.crawlID, staleFor).Get(c.ctx, nil); err != nil {
		workflow.GetLogger(c.ctx).Warn("waking stale hosts failed", "crawl", c.crawlID, "error", err)
	}
}
