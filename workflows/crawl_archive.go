package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/trawlerdev/trawler/activities"
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
