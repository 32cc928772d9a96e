package processing

import (
	"context"
	"errors"
	"fmt"
	"sync"
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
	// crawlLanes is the most batches one run processes at once. A batch is a serial chain
	// (parse, wait for its texts' segment, save, admit, finish) that spends most of its time
	// waiting on Postgres and MinIO, so one lane a run fell ten times behind fetching on a
	// grown database (BENCHMARKS.md, 2026-11-28 07:23). A lane is added when a claim comes back
	// full (a backlog) and ends when one comes back short, so an idle crawl keeps one lane
	// polling; the process worker's gate (process-concurrency) still bounds the parsing.
	crawlLanes = 4
	// crawlRescan is how often a run's claims read the fetched pages from the start while a
	// backlog lasts (otherwise they read from after the newest page the run claimed), for
	// what a dead holder left and pages whose wait began before that newest one but were
	// recorded after it; a rescan that finds a full batch of them is followed by another.
	crawlRescan = 30 * time.Second
)

// ErrStopping is what a crawl's processing returns when its worker begins to stop: it hands
// itself on (the caller makes it a retryable failure, retried on a live worker in seconds)
// instead of waiting out the stop timeout and then its heartbeat timeout.
var ErrStopping = errors.New("process worker stopping: the processing goes on elsewhere")

// Crawl processes a crawl's fetched pages for up to cp.For, in up to crawlLanes batches at
// once, and ends sooner once the crawl is over (done, stopped, being deleted or gone) and
// nothing is left to process. done counts the pages it processed (the caller's heartbeat).
func (p *Stage) Crawl(ctx context.Context, cp crawl.CrawlProcessing, done *atomic.Int64) (crawl.ProcessResult, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r := &crawlRun{p: p, cp: cp, done: done, began: time.Now(), cancel: cancel}
	r.start(ctx)
	r.wg.Wait()
	p.Hooks.log().Info("processed a crawl's pages", "crawl", cp.CrawlID, "owner", cp.Owner,
		"pages", done.Load(), "documents", r.total.Documents, "admitted", r.total.Admitted, "lanes", r.most)
	return r.total, r.err
}

// crawlRun is one run of a crawl's processing: its lanes, what they processed, and the first
// failure.
type crawlRun struct {
	p      *Stage
	cp     crawl.CrawlProcessing
	done   *atomic.Int64
	began  time.Time
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	running [crawlLanes]bool
	// from is where the run's next claim reads from (zero: the start), rescanAt when one
	// reads from the start again: see claimFrom.
	from, rescanAt time.Time
	most           int // the most lanes that ran at once
	total          crawl.ProcessResult
	err            error
}

// start starts the lowest lane not running, if any is left and the run has no failure.
func (r *crawlRun) start(ctx context.Context) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return
	}
	n := 0
	lane := -1
	for i, on := range r.running {
		if on {
			n++
		} else if lane < 0 {
			lane = i
		}
	}
	if lane < 0 {
		return
	}
	r.running[lane] = true
	r.most = max(r.most, n+1)
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		err := r.lane(ctx, lane)
		r.mu.Lock()
		defer r.mu.Unlock()
		r.running[lane] = false
		if err != nil && r.err == nil {
			r.err = err
			if !errors.Is(err, ErrStopping) {
				r.cancel() // the other lanes' batches are retried with the run
			}
		}
	}()
}

// owner is who a lane's claims are held by: lane 0 is the run itself, the others have names of
// their own (what one holds is its own until it is done with it).
func (r *crawlRun) owner(lane int) string {
	if lane == 0 {
		return r.cp.Owner
	}
	return fmt.Sprintf("%s/%d", r.cp.Owner, lane)
}

// takeBack is what every claim of the run takes back at once: what any lane of an earlier
// attempt of the run held (a second before this one began, to allow for the time a claim
// takes to reach Postgres), and never what one of its own lanes holds now.
func (r *crawlRun) takeBack() store.TakeBack {
	owners := make([]string, crawlLanes)
	for i := range owners {
		owners[i] = r.owner(i)
	}
	return store.TakeBack{Owners: owners, Ago: time.Since(r.began) + time.Second}
}

// lane claims and processes batches. Lane 0 waits for more when a claim comes back short and
// decides the run's end; another lane ends then, and so does any lane once the worker
// begins to stop (lane 0 with ErrStopping, after the other lanes' batches).
func (r *crawlRun) lane(ctx context.Context, lane int) error {
	p, owner := r.p, r.owner(lane)
	poll := crawlPollMin
	for time.Since(r.began) < r.cp.For {
		if p.stopping() {
			if lane == 0 {
				return ErrStopping
			}
			return nil
		}
		if closed(p.Orphaned) {
			return nil // the retry takes over; what this lane held is finished
		}
		claim, err := r.claim(ctx, owner)
		if err != nil {
			return err
		}
		full := len(claim.Pages) == crawlProcessBatch
		if full {
			r.start(ctx) // a backlog: one more lane
		}
		if len(claim.Pages) > 0 {
			res, err := p.Pages(ctx, "", store.PageRefs(claim.Pages), r.done)
			if err != nil {
				return err
			}
			r.add(res)
			poll = crawlPollMin
			if full {
				continue // more are waiting
			}
		} else if over(claim.CrawlState) {
			return nil
		}
		if lane != 0 {
			return nil // the backlog is taken: lane 0 waits for more
		}
		if err := p.sleep(ctx, poll); err != nil {
			return err
		}
		if len(claim.Pages) == 0 {
			poll = min(2*poll, crawlPollMax)
		}
	}
	return nil
}

// claim claims a batch for owner. While a backlog lasts the run's claims read the fetched
// pages from after the newest one it claimed: from the start, each claim read again and passed
// over one by one the pages the other lanes hold, the oldest (1,400–1,600 rows a claim with
// four lanes in make bench, issue 49). A claim from there that comes back short is topped up
// by one from the start before the run takes the backlog as done.
func (r *crawlRun) claim(ctx context.Context, owner string) (store.ProcessingClaim, error) {
	p := r.p
	from := r.claimFrom()
	claim, err := p.Store.ClaimFetched(ctx, r.cp.CrawlID, owner, crawlProcessBatch, crawlProcessHold, r.takeBack(), from)
	if err != nil {
		return store.ProcessingClaim{}, err
	}
	if !from.IsZero() && len(claim.Pages) < crawlProcessBatch {
		more, err := p.Store.ClaimFetched(ctx, r.cp.CrawlID, owner, crawlProcessBatch-len(claim.Pages), crawlProcessHold, r.takeBack(), time.Time{})
		if err != nil {
			// (the first part is held by owner already: processed now, not left to its hold)
			p.Hooks.log().Warn("processing: a claim from the start failed", "crawl", r.cp.CrawlID, "owner", owner, "err", err)
			r.claimed(claim, false)
			return claim, nil
		}
		claim.CrawlState, claim.Pages = more.CrawlState, append(claim.Pages, more.Pages...)
		if more.Newest.After(claim.Newest) {
			claim.Newest = more.Newest
		}
	}
	r.claimed(claim, from.IsZero())
	return claim, nil
}

// claimFrom is where the next claim reads from: the start (zero) for the run's first claim,
// after one that came back short (no backlog: the start is cheap) and every crawlRescan;
// otherwise the newest page the run claimed.
func (r *crawlRun) claimFrom() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	if now := time.Now(); r.from.IsZero() || !now.Before(r.rescanAt) {
		r.rescanAt = now.Add(crawlRescan)
		return time.Time{}
	}
	return r.from
}

// claimed moves where claims read from: on after a full claim's newest page, back to the
// start after a short one. A full claim from the start (fromStart) whose pages all came before
// where claims read from found pages left behind (a dead holder's, or recorded late): the
// next claim reads from the start again, until one reaches past it.
func (r *crawlRun) claimed(c store.ProcessingClaim, fromStart bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case len(c.Pages) < crawlProcessBatch:
		r.from = time.Time{}
	case fromStart && c.Newest.Before(r.from):
		r.rescanAt = time.Time{}
	case c.Newest.After(r.from):
		r.from = c.Newest
	}
}

func (r *crawlRun) add(res crawl.ProcessResult) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.total = r.total.Plus(res)
}

// over says whether a crawl in this state fetches nothing more ("": the crawl is gone).
func over(state crawl.CrawlState) bool {
	return state == "" || state == crawl.CrawlDone || state == crawl.CrawlStopped || state == crawl.CrawlDeleting
}

// stopping says whether this worker has begun to stop.
func (p *Stage) stopping() bool {
	return closed(p.Stopping)
}

// closed says whether ch is closed (a nil one never is).
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
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
