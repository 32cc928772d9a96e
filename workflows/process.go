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

// ProcessPageWorkflow is a crawl's processing child (crawl_processing.go): for a while it
// claims the crawl's fetched pages and processes them on the process task queue: parse,
// store text and documents, record links, admit new URLs and wake their hosts. The crawl's
// sweep also starts one for a batch of pages whose processing never finished.
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

// processTimeout bounds one processing attempt: a crawl's processing time and its last
// batch, or 30 s a page of a sweep's batch.
func processTimeout(in crawl.ProcessInput) time.Duration {
	if in.Crawl != nil {
		return in.Crawl.For + 10*time.Minute
	}
	return time.Duration(len(in.Pages))*30*time.Second + time.Minute
}
