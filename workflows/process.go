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
// (crawl.HeartbeatEvery), so a dead process worker's batches move on within this.
const processHeartbeatTimeout = 20 * time.Second

// ProcessPageWorkflow processes a batch of pages the crawl's sweep found unprocessed (a
// processing that failed for good), on the process task queue: parse, store text and
// documents, record links, admit new URLs and wake their hosts.
func ProcessPageWorkflow(ctx workflow.Context, in crawl.ProcessInput) (crawl.ProcessResult, error) {
	ctx = workflow.WithActivityOptions(ctx, processOptions(in.TaskQueue, processTimeout(in)))
	var p *activities.Processor
	var res crawl.ProcessResult
	err := workflow.ExecuteActivity(ctx, p.Process, in).Get(ctx, &res)
	return res, err
}

// processOptions are a processing activity's options on queue (default: the process queue).
func processOptions(queue string, timeout time.Duration) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		TaskQueue:           or(queue, crawl.ProcessQueue),
		StartToCloseTimeout: timeout,
		HeartbeatTimeout:    processHeartbeatTimeout,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    2 * time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    5 * time.Minute,
			MaximumAttempts:    30,
		},
	}
}

// processTimeout bounds one processing attempt: 30 s a page of a sweep's batch.
func processTimeout(in crawl.ProcessInput) time.Duration {
	return time.Duration(len(in.Pages))*30*time.Second + time.Minute
}
