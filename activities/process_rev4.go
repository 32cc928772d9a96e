// Revision 4's crawl processing children ran the Process activity with the crawl in its
// input, kept while crawls started by revision 4 can be running (workflows/doc.go).

package activities

import (
	"context"

	"github.com/trawlerdev/trawler/internal/crawl"
)

// rev4Process runs a revision-4 processing child's activity: its crawl's processing. ok is
// false for any other input.
func (p *Processor) rev4Process(ctx context.Context, in crawl.ProcessInput) (res crawl.ProcessResult, ok bool, err error) {
	if in.Crawl == nil {
		return res, false, nil
	}
	res, err = p.ProcessCrawl(ctx, *in.Crawl)
	return res, true, err
}
