package processing

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/store"
)

// The processing of a crawl is a few long runs per crawl, each the one activity of a
// processing child of the crawl workflow: it claims the crawl's
// fetched pages a few hundred at a time, whatever their host, and processes each claim as
// one batch (one document transaction, one admission per crawl, one finish). A host then
// pays no processing child of its own, and a page's share of the processing's transactions
// and events shrinks with the crawl's pace instead of with its host's.
const (
	// crawlProcessBatch is the most pages one claim takes.
	crawlProcessBatch = 200
	// crawlProcessHold is how long a claim keeps other processing away from its pages: a dead
	// holder's pages are taken over after it (its own retry takes them back at once).
	crawlProcessHold = 2 * time.Minute
	// While nothing comes, processing looks again after crawlPollMin, backing off to
	// crawlPollMax: a host whose lease ran dry waits for its pages' links (and recrawls), and
	// an empty claim is one cheap indexed round trip.
	crawlPollMin = 500 * time.Millisecond
	crawlPollMax = time.Second
)

// ErrStopping is what a crawl's processing returns when its worker begins to stop: it hands
// itself on (the caller makes it a retryable failure, retried on a live worker in seconds)
// instead of waiting out the stop timeout and then its heartbeat timeout.
var ErrStopping = errors.New("process worker stopping: the processing goes on elsewhere")

// Crawl processes a crawl's fetched pages for up to cp.For (see above), and ends sooner once
// the crawl is over (done or stopped, or gone) and nothing is left to process. done counts
// the pages it processed (the caller's heartbeat).
func (p *Stage) Crawl(ctx context.Context, cp crawl.CrawlProcessing, done *atomic.Int64) (crawl.ProcessResult, error) {
	var total crawl.ProcessResult
	began, poll := time.Now(), crawlPollMin
	for first := true; time.Since(began) < cp.For; first = false {
		claim, err := p.Store.ClaimFetched(ctx, cp.CrawlID, cp.Owner, crawlProcessBatch, crawlProcessHold, first)
		if err != nil {
			return total, err
		}
		if len(claim.Pages) > 0 {
			res, err := p.Pages(ctx, "", store.PageRefs(claim.Pages), done)
			if err != nil {
				return total, err
			}
			total = total.Plus(res)
			poll = crawlPollMin
			if len(claim.Pages) == crawlProcessBatch {
				continue // more are waiting
			}
		} else if over(claim.CrawlState) {
			break
		}
		if err := p.sleep(ctx, poll); err != nil {
			return total, err
		}
		if len(claim.Pages) == 0 {
			poll = min(2*poll, crawlPollMax)
		}
	}
	p.Hooks.log().Info("processed a crawl's pages", "crawl", cp.CrawlID, "owner", cp.Owner,
		"pages", done.Load(), "documents", total.Documents, "admitted", total.Admitted)
	return total, nil
}

// over says whether a crawl in this state fetches nothing more ("": the crawl is gone).
func over(state crawl.CrawlState) bool {
	return state == "" || state == crawl.CrawlDone || state == crawl.CrawlStopped
}

// sleep waits d, unless ctx ends or this worker begins to stop (ErrStopping).
func (p *Stage) sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-p.Stopping:
		return ErrStopping
	case <-t.C:
		return nil
	}
}
