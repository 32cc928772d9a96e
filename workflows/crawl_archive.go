package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/trawlerdev/trawler/activities"
	"github.com/trawlerdev/trawler/internal/crawl"
)

// archiveAsyncChange is the crawl workflow's workflow.GetVersion change that stopped its loop
// from waiting on a running crawl's WARC updates. Waiting, the loop started no processing
// child, answered no signal and refreshed no progress while WriteWARC ran: on the hour-long
// bench an update that failed and was retried held a crawl's processing for over ten minutes
// (BENCHMARKS.md, 2026-11-28 11:30). Its default version is revision 6's (archiveAndWait,
// crawl_archive_rev6.go).
const archiveAsyncChange = "archive-async"

// archiveRunning brings a running crawl's WARC files up to date without waiting for it: the
// update starts, and the next one starts only once it has ended (its failure is logged, as
// archive's is; the captures stay in Postgres for the next). A final archive waits for it
// first (archiveFinal).
func (c *crawlRun) archiveRunning() {
	if workflow.GetVersion(c.ctx, archiveAsyncChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		archiveAndWait(c.ctx, c.crawlID, c.carry.ProcessQueue)
		return
	}
	if c.archiving != nil && !c.archiving.IsReady() {
		return
	}
	c.archived()
	if c.continueDue() {
		return // the run continues as new first (run): its successor updates the files
	}
	var a *activities.Archiver
	c.archiving = workflow.ExecuteActivity(archiveOptions(c.ctx, c.carry.ProcessQueue), a.WriteWARC,
		activities.ArchiveInput{CrawlID: c.crawlID, Final: false})
}

// archived waits for the WARC update in progress, if any, and logs its failure.
func (c *crawlRun) archived() {
	if c.archiving == nil {
		return
	}
	var res activities.ArchiveResult
	if err := c.archiving.Get(c.ctx, &res); err != nil {
		workflow.GetLogger(c.ctx).Warn("writing WARC files failed", "crawl", c.crawlID, "error", err)
	}
	c.archiving = nil
}

// archiveSettled says whether no WARC update runs (one that has ended is settled here).
func (c *crawlRun) archiveSettled() bool {
	if c.archiving != nil && !c.archiving.IsReady() {
		return false
	}
	c.archived()
	return true
}

// archiveFinal writes all of the crawl's WARC files, after the update in progress.
func (c *crawlRun) archiveFinal() {
	c.archived()
	archive(c.ctx, c.crawlID, c.carry.ProcessQueue, true)
}

// archiveEvery is how many progress ticks pass between WARC updates of a running crawl (each
// update writes only full files, or files whose oldest capture waited warc.maxAge).
const archiveEvery = 12

// archive brings the crawl's WARC files up to date (all of them, when final). Failures are
// logged, not fatal: the captures stay in Postgres and the next update writes them.
func archive(ctx workflow.Context, crawlID, queue string, final bool) {
	var a *activities.Archiver
	var res activities.ArchiveResult
	if err := workflow.ExecuteActivity(archiveOptions(ctx, queue), a.WriteWARC, activities.ArchiveInput{CrawlID: crawlID, Final: final}).Get(ctx, &res); err != nil {
		workflow.GetLogger(ctx).Warn("writing WARC files failed", "crawl", crawlID, "error", err)
	}
}

// archiveOptions are a WARC update's activity options.
func archiveOptions(ctx workflow.Context, queue string) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           or(queue, crawl.ProcessQueue),
		StartToCloseTimeout: time.Hour,
		HeartbeatTimeout:    2 * time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: 5 * time.Second, MaximumInterval: time.Minute, MaximumAttempts: 5},
	})
}
