package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/trawlerdev/trawler/internal/crawl"
)

// overBudget says which of the crawl's budgets is spent ("" if none): its time (maxDuration,
// from its first run's start) or its bytes (maxBytes, body bytes fetched). A spent budget
// stops the crawl as the stop signal does.
func (c *crawlRun) overBudget() string {
	if d := c.spec.MaxDuration.D(); d > 0 && !c.carry.StartedAt.IsZero() && !workflow.Now(c.ctx).Before(c.carry.StartedAt.Add(d)) {
		return crawl.StopByDuration
	}
	if b := c.spec.MaxBytes; b > 0 && c.progress.Bytes >= b {
		return crawl.StopByBytes
	}
	return ""
}

// nextLook is how long the crawl waits before it reads its progress again: a progress
// interval, or less when its time budget ends sooner (it stops then, not a tick later).
func (c *crawlRun) nextLook() time.Duration {
	wait := c.spec.ProgressInterval.D()
	if d := c.spec.MaxDuration.D(); d > 0 && !c.carry.StartedAt.IsZero() {
		left := c.carry.StartedAt.Add(d).Sub(workflow.Now(c.ctx))
		wait = max(min(wait, left), time.Millisecond)
	}
	return wait
}
