package fetching

import (
	"context"

	"github.com/trawlerdev/trawler/internal/clock"
	"github.com/trawlerdev/trawler/internal/failpoint"
)

// flushWhenStopped stores the current body segment at once if the lease is stopped (a pause
// or throttle cancels it): the outcomes of its last requests wait for that segment, and the
// host should not wait a segment's age for its new pacing. A lease that ends by itself does
// not: its pages share the segment with every other lease's. Call the result when done.
func (f *Stage) flushWhenStopped(ctx context.Context) func() {
	if f.Flush == nil {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			f.Flush()
		case <-done:
		}
	}()
	return func() { close(done) }
}

// Lease runs one fetch lease: it claims the host's due URLs a chunk at a time (chunks.go),
// passes each through the gate (gate.go: robots.txt, the crawl's pacing, the host's slot),
// requests what passes and records every outcome (request.go), at most in.Concurrency
// requests at a time, their starts at least the delay apart, until the lease is up or the
// host runs dry. Fetched pages are left for the crawl's processing, which claims them.
// resumed is the last progress an earlier attempt of the lease reported (attempt > 1), if any.
func (f *Stage) Lease(ctx context.Context, in LeaseInput, resumed LeaseBeat, attempt int) (_ LeaseResult, err error) {
	b := &leaseRun{f: f, in: in, next: in.NotBefore, began: f.clock().Now(), res: resumed.LeaseResult}
	defer func() {
		if err != nil {
			b.beat() // the last progress lands before the failure, for the retry to resume from
		}
	}()
	defer b.beats(ctx)()
	defer b.beatWhenTold(ctx)()
	defer f.flushWhenStopped(ctx)()
	// The first claim is the lease owner's: a retry takes back first what its predecessor
	// held and did not finish (LeaseBeat).
	if more, err := b.claimChunk(ctx, b.in.Owner); err != nil || !more {
		return b.result(), err
	}
	first := b.urls
	if err := b.pace(ctx, b.urls); err != nil {
		return LeaseResult{}, err
	}
	if attempt > 1 {
		// A previous attempt may have sent a request after its last delivered heartbeat:
		// start a full delay from now, which is after all of them.
		b.next = clock.Later(b.next, f.clock().Now().Add(max(b.in.Delay, b.res.CrawlDelay)))
	} else if !b.res.LastRequestAt.IsZero() {
		b.next = clock.Later(b.next, b.res.LastRequestAt.Add(b.delay()))
	}
	if why := f.refusedHost(ctx, b.in.Host); why != "" {
		err := b.refuse(ctx, why) // (before the result is read: it counts the skips)
		return b.result(), err
	}
	b.ip = f.Schedule.IPOf(ctx, b.in.Host)
	b.sem = make(chan struct{}, max(b.in.Concurrency, 1))
	b.errs = make(chan error, 1)
	res, err := b.wait(b.run(ctx, newGate(b)))
	if err != nil {
		return res, err
	}
	ci, cerr := f.Crawls.Get(ctx, first[0].CrawlID)
	if cerr != nil {
		return res, cerr
	}
	res.Retired, err = f.hostHealth(ctx, b.in.Host, res, ci.Spec.RetireAfter.D(), b.knownHealthy())
	if err == nil {
		err = b.end(ctx)
	}
	failpoint.Hit(failpoint.BatchFetched)
	f.Hooks.log().Info("fetch lease done", "host", b.in.Host, "crawl", ci.ID, "chunk", len(b.urls),
		"requests", res.Requests, "fetched", res.Fetched, "notModified", res.NotModified, "errors", res.Errors,
		"skipped", res.Skipped, "deferred", res.Deferred, "lastError", res.LastError)
	return res, err
}

// run takes the lease's URLs through its steps, one after another: the claim of the next
// chunk, the gate, the request and the record. It returns when the lease is over (nil) or on
// the first failure on our side; Lease then waits for the requests in flight.
func (b *leaseRun) run(ctx context.Context, g *gate) error {
	for i := 0; ; i++ {
		if i == len(b.urls) {
			if b.in.Concurrency > 1 {
				return nil // concurrent requests: one chunk a lease (the next claim would wait for them all)
			}
			if more, err := b.nextChunk(ctx); err != nil || !more {
				return err
			}
			i = 0 // the chunk replaced the finished one
		}
		if b.finished[i] {
			continue
		}
		if err := b.failed(); err != nil { // a request of this lease failed on our side: stop, retry the activity
			return err
		}
		u := b.urls[i]
		p, err := g.check(ctx, i, u)
		if err != nil {
			return err
		}
		if p.decided != nil {
			if err := b.recordDecided(ctx, i, *p.decided); err != nil {
				return err
			}
			continue
		}
		t, err := b.ticket(ctx, i, u, p)
		switch {
		case err != nil:
			return err
		case t.far:
			return nil // the lease ends: the host workflow's timer waits for the slot
		case t.release:
			if err := b.releaseCrawl(ctx, u.CrawlID); err != nil {
				return err
			}
		case t.done:
			b.finish(i)
		case t.decided != nil:
			if err := b.recordDecided(ctx, i, *t.decided); err != nil {
				return err
			}
		default:
			b.request(ctx, i, u, p, t.start)
		}
	}
}
