// Revision 4 of a crawl's processing children, kept while crawls started by it can be running
// (doc.go): they were ProcessPageWorkflow children with the crawl in their input. Reached only
// from crawlProcessing.keep, for runs whose history has no crawlProcessingChange marker, and
// from processTimeout for the children such runs started.

package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/trawlerdev/trawler/internal/crawl"
)

// startRev4Processing starts a crawl's processing child as revision 4 did.
func startRev4Processing(ctx workflow.Context, in crawl.CrawlProcessing) workflow.ChildWorkflowFuture {
	cp := in
	cp.TaskQueue = ""
	return workflow.ExecuteChildWorkflow(ctx, ProcessPageWorkflow, crawl.ProcessInput{TaskQueue: in.TaskQueue, Crawl: &cp})
}

// rev4ProcessTimeout bounds an attempt of a revision-4 processing child (one with the crawl in
// its input): the crawl's processing time and its last batch. ok is false for any other input.
func rev4ProcessTimeout(in crawl.ProcessInput) (d time.Duration, ok bool) {
	if in.Crawl == nil {
		return 0, false
	}
	return in.Crawl.For + 10*time.Minute, true
}
