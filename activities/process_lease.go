// Serves only host workflows of revision < 3 (crawl.HostRevision), which process their own
// fetch leases' pages; from revision 3 on a crawl's processing claims them (process_crawl.go).
// Kept for running histories; live code does not call into this file.

package activities

import (
	"context"
	"sync/atomic"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/trawlerdev/trawler/internal/crawl"
)

// The processing of a fetch lease runs beside it: it looks for the pages fetched under the
// lease's claim owners, processes what it finds in one batch (links admitted in one
// transaction per crawl), and looks again, more slowly while nothing comes, until the lease
// is over and every page it fetched is processed.
const (
	// While the lease may be waiting for the links its pages yield, processing looks every
	// second (a page waits for its body's segment, up to a second, before it can be seen at
	// all), then less often while nothing comes.
	leasePollMin = time.Second
	leasePollMax = 3 * time.Second
	// leaseBacklogPoll is how often it looks while the host's queue is deep: the lease is not
	// waiting for these links, and pages processed a few at a time cost a batch's transactions
	// (documents, admission, finish) each.
	leaseBacklogPoll = 6 * time.Second
	// leaseAbsentWait is how long processing waits for a lease row that does not exist: its
	// fetch activity has not started yet, or the row was dropped by an attempt of this
	// processing that died before reporting.
	leaseAbsentWait = 2 * time.Minute
)

// processLease processes a fetch lease's pages as they are fetched (see above).
func (p *Processor) processLease(ctx context.Context, in crawl.ProcessInput) (crawl.ProcessResult, error) {
	var total crawl.ProcessResult
	var done atomic.Int64
	defer keepAlive(ctx, func() any { return done.Load() })()
	processed := map[string]bool{} // pages this attempt processed, in case one stays "fetched"
	poll, seen := leasePollMin, time.Now()
	for {
		st, err := p.Store.LeasePages(ctx, in.Lease.Owner, in.Host, in.Lease.Owners)
		if err != nil {
			return total, err
		}
		var fresh []crawl.PageRef
		for _, pg := range pageRefs(st.Pages) {
			if k := pageKey(pg); !processed[k] {
				processed[k] = true
				fresh = append(fresh, pg)
			}
		}
		if len(fresh) > 0 {
			res, err := p.processPages(ctx, in.Host, fresh, &done)
			if err != nil {
				return total, err
			}
			total = total.Plus(res)
			poll = leasePollMin
			if !st.Backlog {
				continue // links may be what the lease waits for: look again at once
			}
		}
		if st.Exists {
			seen = time.Now()
		}
		if len(fresh) == 0 && (st.Done || time.Since(seen) > leaseAbsentWait) {
			if st.Exists {
				if err := p.Store.DropLease(ctx, in.Lease.Owner); err != nil {
					return total, err
				}
			}
			activity.GetLogger(ctx).Info("processed a fetch lease", "host", in.Host, "lease", in.Lease.Owner,
				"pages", done.Load(), "documents", total.Documents, "admitted", total.Admitted)
			return total, nil
		}
		wait := poll
		if st.Backlog {
			wait = leaseBacklogPoll
		}
		if err := p.sleep(ctx, wait); err != nil {
			return total, err
		}
		poll = min(2*poll, leasePollMax)
	}
}

// sleep waits d, unless the activity is cancelled or this worker begins to stop: then the
// processing hands itself on (a retryable failure, retried on a live worker in seconds)
// instead of waiting out the stop timeout and then its heartbeat timeout.
func (p *Processor) sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-p.Stopping:
		return temporal.NewApplicationError("process worker stopping: the processing goes on elsewhere", "WorkerStopping")
	case <-t.C:
		return nil
	}
}

func pageKey(p crawl.PageRef) string { return p.CrawlID + "\x00" + string(p.Hash) + "\x00" + p.BodyKey }
