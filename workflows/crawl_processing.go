package workflows

import (
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/workflow"

	"github.com/trawlerdev/trawler/activities"
	"github.com/trawlerdev/trawler/internal/crawl"
)

const (
	// crawlProcessors is how many processing children a crawl keeps running (hosts start
	// none of their own): two, so one parses while the other waits for its texts' segment to
	// be stored.
	crawlProcessors = 2
	// crawlProcessFor is how long one of them runs before the next takes over: long enough that
	// its dozen events are spread over thousands of pages, short enough that a new worker
	// build takes over within minutes (a stopping worker hands its runs on at once).
	//
	// The pair is staggered (keep): the next child starts only once the crawl's workflow task
	// has seen its predecessor end, and on a busy server that handover took 2 to 3 minutes
	// (its task, the child's first, the activity's dispatch: BENCHMARKS.md, 2026-11-28
	// 13:20–15:11). Ending together, both left the crawl's fetched pages waiting that long
	// every run; staggered by half a run, one processes while the other hands over.
	crawlProcessFor = 10 * time.Minute
)

// CrawlProcessingWorkflow is one of a crawl's processing children: for in.For it claims the
// crawl's fetched pages, whatever their host, and processes them on the process task queue
// (parse, store text and documents, record links, admit new URLs and wake their hosts), a
// few hundred at a time; it ends sooner once the crawl is over and nothing is left.
func CrawlProcessingWorkflow(ctx workflow.Context, in crawl.CrawlProcessing) (crawl.ProcessResult, error) {
	ctx = workflow.WithActivityOptions(ctx, processOptions(in.TaskQueue, in.For+10*time.Minute))
	var p *activities.Processor
	var res crawl.ProcessResult
	err := workflow.ExecuteActivity(ctx, p.ProcessCrawl, in).Get(ctx, &res)
	return res, err
}

// crawlProcessing keeps a crawl's processing children running: each claims the crawl's
// fetched pages, whatever their host, and processes them in batches of a few hundred.
type crawlProcessing struct {
	crawlID, queue string
	seq            int
	running        []workflow.ChildWorkflowFuture
}

// keep starts children until crawlProcessors are running. They are abandoned when the crawl
// continues as new or ends: each ends by itself after its run (crawlProcessFor), or once the
// crawl is over and nothing is left to process.
func (cp *crawlProcessing) keep(ctx workflow.Context) {
	info := workflow.GetInfo(ctx)
	for len(cp.running) < crawlProcessors {
		cp.seq++
		id := crawl.CrawlProcessID(info.WorkflowExecution.ID, info.OriginalRunID, cp.seq)
		cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
			WorkflowID:        id,
			ParentClosePolicy: enumspb.PARENT_CLOSE_POLICY_ABANDON,
		})
		in := crawl.CrawlProcessing{CrawlID: cp.crawlID, Owner: id, For: runFor(len(cp.running)), TaskQueue: cp.queue}
		cp.running = append(cp.running, workflow.ExecuteChildWorkflow(cctx, CrawlProcessingWorkflow, in))
	}
}

// runFor is how long a child runs, given how many others are running as it starts: the first
// of a pair started together (a crawl's start, a new run of the crawl, both ended at once) runs
// half a run, so that from then on their ends, and the handovers after them, are half a run
// apart.
func runFor(running int) time.Duration {
	if running == 0 && crawlProcessors > 1 {
		return crawlProcessFor / 2
	}
	return crawlProcessFor
}

// addTo lets sel wake when a child ends (or fails to start), which then makes room for the
// next one.
func (cp *crawlProcessing) addTo(ctx workflow.Context, sel workflow.Selector) {
	for _, f := range cp.running {
		f := f
		sel.AddFuture(f, func(workflow.Future) {
			if err := f.Get(ctx, nil); err != nil {
				workflow.GetLogger(ctx).Warn("a crawl's processing ended with an error; the next one takes over", "crawl", cp.crawlID, "error", err)
			}
			cp.drop(f)
		})
	}
}

func (cp *crawlProcessing) drop(f workflow.ChildWorkflowFuture) {
	for i, r := range cp.running {
		if r == f {
			cp.running = append(cp.running[:i], cp.running[i+1:]...)
			return
		}
	}
}

// started waits until every running child has started: an abandoned child whose start is
// still pending when its parent closes is never started.
func (cp *crawlProcessing) started(ctx workflow.Context) {
	for _, f := range cp.running {
		if err := f.GetChildWorkflowExecution().Get(ctx, nil); err != nil {
			workflow.GetLogger(ctx).Warn("starting a crawl's processing failed", "crawl", cp.crawlID, "error", err)
		}
	}
}
