package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/trawlerdev/trawler/activities"
	"github.com/trawlerdev/trawler/internal/crawl"
)

// processHeartbeatTimeout is how long a processing batch may go without a heartbeat before
// Temporal retries it elsewhere: it heartbeats after every page and every few seconds
// (activities.heartbeatEvery), so a dead process worker's batches move on within this.
const processHeartbeatTimeout = 20 * time.Second

// ProcessPageWorkflow processes one fetch batch's pages, or those of a fetch lease as it runs,
// on the process task queue: parse,
// store text and documents, record links, admit new URLs and wake their hosts. One child per
// batch keeps the cost per page low (a child workflow per page would cap the system near 17
// pages/s on the dev server).
func ProcessPageWorkflow(ctx workflow.Context, in crawl.ProcessInput) (crawl.ProcessResult, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           or(in.TaskQueue, crawl.ProcessQueue),
		StartToCloseTimeout: processTimeout(in),
		HeartbeatTimeout:    processHeartbeatTimeout,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    2 * time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    5 * time.Minute,
			MaximumAttempts:    30,
		},
	})
	var p *activities.Processor
	var res crawl.ProcessResult
	err := workflow.ExecuteActivity(ctx, p.Process, in).Get(ctx, &res)
	return res, err
}

// processTimeout bounds one processing attempt: 30 s a page, a fetch lease's length and then
// as long again for its last pages, or a crawl's processing time and its last batch.
func processTimeout(in crawl.ProcessInput) time.Duration {
	if in.Crawl != nil {
		return in.Crawl.For + 10*time.Minute
	}
	if in.Lease != nil {
		return 2*in.Lease.For + 10*time.Minute
	}
	return time.Duration(len(in.Pages))*30*time.Second + time.Minute
}
