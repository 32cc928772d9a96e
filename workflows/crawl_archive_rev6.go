package workflows

import "go.temporal.io/sdk/workflow"

// archiveAndWait is revision 6's WARC update of a running crawl, kept for its runs (doc.go):
// the crawl's loop waits for it.
func archiveAndWait(ctx workflow.Context, crawlID, queue string) {
	archive(ctx, crawlID, queue, false)
}
