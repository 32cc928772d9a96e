package workflows

import (
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/trawlerdev/trawler/activities"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/deliver"
)

// DeliverInput is DeliverWorkflow's input: one output of a crawl, with its pacing from the
// spec, and the totals a continued run carries.
type DeliverInput struct {
	CrawlID string         `json:"crawlId"`
	Output  string         `json:"output"`
	Every   crawl.Duration `json:"every,omitempty"`  // wait when caught up (default crawl.DefaultDeliverEvery)
	Queue   string         `json:"queue,omitempty"`  // the process queue (default crawl.ProcessQueue)
	Replay  bool           `json:"replay,omitempty"` // send dead-lettered batches again first
	Totals  DeliverTotals  `json:"totals,omitzero"`
}

// DeliverTotals is what a DeliverWorkflow delivered, its result.
type DeliverTotals struct {
	Records  int `json:"records"`
	Batches  int `json:"batches"`
	Dead     int `json:"dead"`
	Replayed int `json:"replayed"`
}

// deliverRunFor is how long one delivery activity sends before it reports back.
const deliverRunFor = deliver.DefaultRunFor

// DeliverWorkflow (ID crawl.DeliverID) delivers a crawl's documents to one output while the
// crawl runs: an activity on the process queue sends what is new (for half a minute at most),
// retried with exponential backoff when a batch fails (its last try dead-letters the batch);
// caught up, it waits the output's interval, or a replay-deliveries signal. It ends once the
// crawl has ended and everything is delivered. Its cursor is in Postgres, so a run started
// again (trawler deliver) goes on where the last stopped.
func DeliverWorkflow(ctx workflow.Context, in DeliverInput) (DeliverTotals, error) {
	every := in.Every.D()
	if every <= 0 {
		every = crawl.DefaultDeliverEvery
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue: or(in.Queue, crawl.ProcessQueue),
		// A run sends for deliverRunFor, then finishes the batch in flight (one request of at
		// most a minute); it beats after every batch.
		StartToCloseTimeout: deliverRunFor + 3*time.Minute,
		HeartbeatTimeout:    90 * time.Second,
		// Unlimited: a batch's tries are counted in Postgres, and its last one dead-letters it
		// (spec maxAttempts); these retries space the tries out, and outlast a store's outage.
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: 2 * time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute},
	})
	replay := workflow.GetSignalChannel(ctx, crawl.SignalRedeliver)
	var d *activities.Deliverer
	for {
		if info := workflow.GetInfo(ctx); info.GetContinueAsNewSuggested() || info.GetCurrentHistoryLength() > 2000 {
			for replay.ReceiveAsync(nil) {
				in.Replay = true
			}
			return in.Totals, workflow.NewContinueAsNewError(ctx, DeliverWorkflow, in)
		}
		for replay.ReceiveAsync(nil) {
			in.Replay = true
		}
		var res activities.DeliverResult
		err := workflow.ExecuteActivity(actx, d.Deliver, activities.DeliverInput{CrawlID: in.CrawlID, Output: in.Output,
			Replay: in.Replay, For: deliverRunFor}).Get(ctx, &res)
		if err != nil {
			// Not retryable (a bug, a cancel): nothing was lost, the cursor stands; try again
			// after the interval.
			workflow.GetLogger(ctx).Warn("delivery failed", "crawl", in.CrawlID, "output", in.Output, "error", err)
		} else {
			// A replay that failed leaves its batch dead (the operator replays again); one
			// that ran out of time goes on in the next run.
			in.Replay = res.ReplayLeft
			in.Totals.Records += res.Records
			in.Totals.Batches += res.Batches
			in.Totals.Dead += res.Dead
			in.Totals.Replayed += res.Replayed
			workflow.SetCurrentDetails(ctx, deliverDetails(in, res.CaughtUp))
			if res.Ended {
				return in.Totals, nil
			}
			if !res.CaughtUp {
				continue
			}
		}
		sel := workflow.NewSelector(ctx)
		tctx, cancel := workflow.WithCancel(ctx)
		sel.AddFuture(workflow.NewTimer(tctx, every), func(workflow.Future) {})
		sel.AddReceive(replay, func(ch workflow.ReceiveChannel, _ bool) {
			ch.Receive(ctx, nil)
			in.Replay = true
		})
		sel.Select(ctx)
		cancel()
	}
}

// deliverDetails is the line the Temporal UI shows as the delivery's current details, saying
// what a caught-up output waits for (a crawl that never ends keeps it waiting).
func deliverDetails(in DeliverInput, caughtUp bool) string {
	t := in.Totals
	line := fmt.Sprintf("**%s** · %d records in %d batches · %d dead-lettered · %d dead batches replayed",
		in.Output, t.Records, t.Batches, t.Dead, t.Replayed)
	if caughtUp {
		line += " · caught up: waiting for new documents, or for crawl " + in.CrawlID + " to end"
	}
	return line
}

// startDeliveries starts a DeliverWorkflow for each of the crawl's outputs (its first run
// only). They outlive the crawl's runs (ABANDON) and end by themselves once the crawl ended
// and they caught up.
func (c *crawlRun) startDeliveries() {
	id := workflow.GetInfo(c.ctx).WorkflowExecution.ID
	for _, out := range c.spec.Outputs {
		cctx := workflow.WithChildOptions(c.ctx, workflow.ChildWorkflowOptions{
			WorkflowID:            crawl.DeliverID(id, out.Name),
			ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_ABANDON,
			WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
			StaticSummary:         "Delivers crawl " + c.crawlID + "'s documents to output " + out.Name + "; signal `" + crawl.SignalRedeliver + "`",
		})
		child := workflow.ExecuteChildWorkflow(cctx, DeliverWorkflow, DeliverInput{CrawlID: c.crawlID, Output: out.Name,
			Every: out.Every, Queue: c.carry.ProcessQueue})
		if err := child.GetChildWorkflowExecution().Get(c.ctx, nil); err != nil {
			// Already running (an operator's trawler deliver): that run delivers.
			workflow.GetLogger(c.ctx).Warn("starting a delivery failed", "crawl", c.crawlID, "output", out.Name, "error", err)
		}
	}
}
