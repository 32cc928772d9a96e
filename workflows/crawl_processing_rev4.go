// Revision 4 of a crawl's processing children, kept while crawls started by it can be running
// (doc.go): they were ProcessPageWorkflow children with the crawl in their input. Reached only
// from crawlProcessing.keep, for runs whose history has no crawlProcessingChange marker.

package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/trawlerdev/trawler/internal/crawl"
)

// startRev4Processing starts a crawl's processing child as revision 4 did.
func startRev4Processing(ctx workflow.Context, in crawl.CrawlProcessing) workflow.ChildWorkflowFuture {
	cp := in
	cp.TaskQueue = ""
	return workflow.ExecuteChildWorkflow(ctx, ProcessPageWorkflow, crawl.ProcessInput{TaskQueue: in.TaskQueue, Crawl: &cp})
}
