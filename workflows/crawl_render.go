package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/trawlerdev/trawler/activities"
	"github.com/trawlerdev/trawler/internal/crawl"
)

// renderRunFor is how long one render run lasts before the crawl starts the next.
const renderRunFor = 2 * time.Minute

// render keeps one render run going while pages wait to be rendered: an activity on the
// render queue (a worker with Chromium) that claims the crawl's queued renders from Postgres.
// A lease that failed or ended is followed by the next at a later tick.
func (c *crawlRun) render(tick int) {
	if c.rendering != nil && !c.rendering.IsReady() {
		return
	}
	if c.rendering != nil {
		var res activities.RenderResult
		if err := c.rendering.Get(c.ctx, &res); err != nil {
			workflow.GetLogger(c.ctx).Warn("render run failed", "crawl", c.crawlID, "error", err)
		}
	}
	actx := workflow.WithActivityOptions(c.ctx, workflow.ActivityOptions{
		TaskQueue:           or(c.carry.RenderQueue, crawl.RenderQueue),
		StartToCloseTimeout: renderRunFor + 3*time.Minute,
		// The run beats every few seconds, pages rendering or not: a dead render worker's
		// claims are taken back by the retry within the recovery bound (README, Resilience).
		HeartbeatTimeout: 20 * time.Second,
		RetryPolicy:      &temporal.RetryPolicy{InitialInterval: 5 * time.Second, MaximumInterval: time.Minute, MaximumAttempts: 3},
	})
	var r *activities.Renderer
	owner := crawl.RenderOwner(workflow.GetInfo(c.ctx).WorkflowExecution.RunID, tick)
	c.rendering = workflow.ExecuteActivity(actx, r.RenderPages, activities.RenderInput{CrawlID: c.crawlID, Owner: owner, For: renderRunFor})
}
