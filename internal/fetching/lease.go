package fetching

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/trawlerdev/trawler/internal/clock"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/failpoint"
	"github.com/trawlerdev/trawler/internal/metrics"
	"github.com/trawlerdev/trawler/internal/pacing"
	"github.com/trawlerdev/trawler/internal/robots"
	"github.com/trawlerdev/trawler/internal/store"
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

// Lease runs one fetch lease: it claims the host's due URLs a chunk at a time and fetches
// them, at most in.Concurrency at a time, request starts at least the delay apart, until the
// lease is up or the host runs dry (chunks.go). robots.txt comes first when its cache has
// expired (itself requested under the same schedule). A URL robots.txt forbids is skipped
// without a request. After a Retry-After the rest of the chunk goes back to the queue for
// later. Fetched pages are left for the crawl's processing, which claims them.
// resumed is the last progress an earlier attempt of the lease reported (attempt > 1), if any.
func (f *Stage) Lease(ctx context.Context, in LeaseInput, resumed LeaseBeat, attempt int) (_ LeaseResult, err error) {
	b := &leaseRun{f: f, in: in, next: in.NotBefore, began: f.clock().Now(), res: resumed}
	defer func() {
		if err != nil {
			b.beat() // the SDK sends the last progress with the failure: make it the latest
		}
	}()
	b.urls = b.res.Chunk // resumed: the chunk the last attempt was at
	if len(b.res.Finished) != len(b.urls) {
		b.res.Finished, b.res.Chunk, b.urls = nil, nil, nil
	}
	defer clock.Every(ctx, f.beatEvery(), b.beat)()
	defer f.flushWhenStopped(ctx)()
	if len(b.urls) == 0 {
		if more, err := b.claimChunk(ctx, b.in.Owner); err != nil || !more {
			return b.result(), err
		}
	}
	first := b.urls
	if err := b.pace(ctx, b.urls); err != nil {
		return LeaseResult{}, err
	}
	in = b.in
	if attempt > 1 {
		// A previous attempt may have sent a request after its last delivered heartbeat:
		// start a full delay from now, which is after all of them.
		b.next = clock.Later(b.next, f.clock().Now().Add(max(in.Delay, b.res.CrawlDelay)))
	} else if !b.res.LastRequestAt.IsZero() {
		b.next = clock.Later(b.next, b.res.LastRequestAt.Add(b.delay()))
	}
	if why := f.refusedHost(ctx, in.Host); why != "" {
		// Every address of the host is forbidden (loopback, private, link-local, metadata…):
		// not even robots.txt is requested.
		for i, u := range b.urls {
			if b.res.Finished[i] {
				continue
			}
			o := store.FetchOutcome{CrawlID: u.CrawlID, Hash: u.Hash, URL: u.URL, Attempts: u.Attempts,
				State: crawl.URLSkipped, SkipReason: "blocked address", Err: why}
			if err := f.record(ctx, in.Host, o); err != nil {
				return b.result(), err
			}
			b.note(o)
			f.Hooks.Count.Add(metrics.Refused, 1)
			b.mu.Lock()
			b.res.Skipped++
			b.mu.Unlock()
			b.finish(ctx, i)
		}
		return b.result(), b.end(ctx)
	}
	b.ip = f.Schedule.IPOf(ctx, in.Host)
	n := max(in.Concurrency, 1)
	sem := make(chan struct{}, n)
	errs := make(chan error, 1) // the first failure on our side stops the lease (leaseRun.fail)
	// robots.txt is per scheme (RFC 9309 §2.3): a cached file and its parsed rules for each
	// scheme, the rules also per product token (crawls may name different ones).
	// robots.txt is asked for through the crawl's proxy, its redirects judged by the crawl's
	// deny lists and ports: what one crawl brought back (its proxy's failure, a hop it refused)
	// is not another crawl's answer, so both are kept per crawl (one, in nearly every lease).
	type rulesKey struct{ scheme, token, crawl string }
	type cachedKey struct{ scheme, crawl string }
	rulesOf := map[rulesKey]*robots.Rules{}
	cachedOf := map[cachedKey]*store.Robots{}
	sitemapsChecked := map[string]bool{} // crawls whose sitemap discovery on this host is settled
	for i := 0; ; i++ {
		if i == len(b.urls) {
			if n > 1 {
				break // concurrent requests: one chunk a lease (the next claim would wait for them all)
			}
			more, err := b.nextChunk(ctx, sem)
			if err != nil {
				return b.wait(sem, errs, err)
			}
			if !more {
				break
			}
			i = 0 // the chunk replaced the finished one
		}
		u := b.urls[i]
		if b.res.Finished[i] {
			continue
		}
		select {
		case err := <-errs: // a request of this lease failed on our side: stop, retry the activity
			return b.wait(sem, nil, err)
		default:
		}
		ci, err := f.Crawls.Get(ctx, u.CrawlID)
		if err != nil {
			return b.wait(sem, errs, err)
		}
		if ci.Unresolved != "" {
			// A secret the spec names is not readable here: no request goes without it.
			o := b.unresolved(ci, u)
			if err := f.record(ctx, in.Host, o); err != nil {
				return b.wait(sem, errs, err)
			}
			b.note(o)
			b.finish(ctx, i)
			continue
		}
		scheme := schemeOf(u.URL)
		rules := rulesOf[rulesKey{scheme, ci.Token, ci.ID}]
		cached := cachedOf[cachedKey{scheme, ci.ID}]
		obeys := ci.ObeysRobots(in.Host)
		if rules == nil && !obeys {
			// The crawl's robotsOverride names this host (the operator's own site): robots.txt
			// is neither requested nor obeyed; the delay still paces every request.
			rules = robots.FromStatus(http.StatusNotFound, nil, ci.Token) // allows all
			rulesOf[rulesKey{scheme, ci.Token, ci.ID}] = rules
			f.Hooks.log().Warn("robots.txt not obeyed: the crawl's robotsOverride names the host", "crawl", ci.ID, "host", in.Host)
		}
		if rules == nil {
			if cached == nil || f.clock().Now().After(cached.ExpiresAt) {
				b.drain(sem) // robots.txt alone, before any page of its scheme
				b.mu.Lock()
				b.cursor = i
				b.mu.Unlock()
				if cached, err = f.robots(ctx, b, u.URL, ci); err != nil {
					return b.result(), err
				}
				cachedOf[cachedKey{scheme, ci.ID}] = cached
			}
			rules = robots.FromStatus(cached.Status, []byte(cached.Body), ci.Token)
			rulesOf[rulesKey{scheme, ci.Token, ci.ID}] = rules
			if d := rules.CrawlDelay; d > 0 {
				// One server answers both schemes: the larger Crawl-delay paces them all. A
				// crawl that will not wait that long skips the host's URLs (withoutRequest) and
				// does not slow the host for the others.
				b.mu.Lock()
				if pacing.CrawlDelayOver(d, ci.Spec.MaxCrawlDelay.D()) {
					b.res.CrawlDelayCapped = true
				} else if d := pacing.CrawlDelayPace(d).Delay; d > b.res.CrawlDelay {
					b.res.CrawlDelay = d
				}
				b.delayRaisedLocked()
				b.mu.Unlock()
			}
		}
		if !sitemapsChecked[ci.ID] {
			sitemapsChecked[ci.ID] = true
			if err := f.discoverSitemaps(ctx, ci, in.Host, cached, u.URL); err != nil {
				return b.wait(sem, errs, err)
			}
		}
		if err := b.repace(ctx); err != nil { // a crawl's throttle, or its end, mid-chunk
			return b.wait(sem, errs, err)
		}
		jar, err := b.cookies(ctx, ci) // (read before the slot is booked: the request leaves on time)
		if err != nil {
			return b.wait(sem, errs, err)
		}
		// Acquire a place first: a response that arrives meanwhile (a Retry-After) can still
		// keep this URL from being requested.
		sem <- struct{}{}
		o, skip := b.withoutRequest(ci, u, rules)
		var start time.Time
		var slot pacing.Slot
		if !skip {
			slot, err = b.takeFor(ctx, i)
			start = slot.Start
			if errors.Is(err, errDeferred) {
				o, skip = b.withoutRequest(ci, u, rules)
			} else if errors.Is(err, errSlotFar) {
				<-sem
				break // the lease ends: the host workflow's timer waits for the slot
			} else if err != nil {
				<-sem
				return b.wait(sem, errs, err)
			}
		}
		if !skip {
			// The crawl may have been stopped, or the URL blocked, since the lease claimed it; or
			// an attempt of this lease that died fetched it already (its page waits for the
			// crawl's processing). Read with the slot's booking, in the same round trip.
			state, crawlState := slot.URLState, slot.CrawlState
			if state == crawl.URLClaimed && crawlState == crawl.CrawlPaused {
				// Paused since the claim: this and the crawl's other URLs of the lease go back
				// to the queue now, not one slot at a time.
				b.endRequest()
				<-sem
				if err := b.releaseCrawl(ctx, u.CrawlID); err != nil {
					return b.wait(sem, errs, err)
				}
				continue
			}
			if state != crawl.URLClaimed {
				b.endRequest()
				<-sem
				b.finish(ctx, i)
				continue
			}
		}
		if skip {
			<-sem
			if err := f.record(ctx, in.Host, o); err != nil {
				return b.wait(sem, errs, err)
			}
			if o.State == crawl.URLSkipped && strings.HasPrefix(o.SkipReason, "robots.txt") {
				f.Hooks.Count.Add(metrics.RobotsBlocked, 1)
			}
			b.note(o)
			b.finish(ctx, i)
			continue
		}
		if !obeys {
			f.Hooks.Count.Add(metrics.RobotsOverridden, 1)
		}
		b.recording.Add(1)
		go func() {
			defer b.recording.Done()
			o, eff, err := f.fetchOne(ctx, ci, u, start, b.sent(ctx, start), jar)
			if err != nil {
				<-sem
				b.endRequest()
				b.fail(errs, err)
				return
			}
			// The response's effect on the host's pacing (a Retry-After) counts at once, and the
			// request's place is free: the next request need not wait for this one's body to
			// be stored. Its outcome is recorded once it is, even if the lease is being stopped.
			b.apply(eff)
			<-sem
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			defer cancel()
			if eff.stored != nil {
				err = eff.stored(rctx)
			}
			if err == nil {
				err = f.record(rctx, in.Host, o)
			}
			if err != nil {
				b.fail(errs, err)
				return
			}
			failpoint.Hit(failpoint.FetchRecorded)
			f.observe(o)
			b.note(o)
			b.finish(ctx, i)
			if o.Err != "" {
				f.Hooks.log().Debug("fetch failed", "crawl", u.CrawlID, "host", in.Host, "url", u.URL, "error", o.Err, "state", o.State)
			}
		}()
	}
	res, err := b.wait(sem, errs, nil)
	if err != nil {
		return res, err
	}
	ci, cerr := f.Crawls.Get(ctx, first[0].CrawlID)
	if cerr != nil {
		return res, cerr
	}
	res.Retired, err = f.hostHealth(ctx, in.Host, res, ci.Spec.RetireAfter.D(), b.knownHealthy())
	if err == nil {
		err = b.end(ctx)
	}
	failpoint.Hit(failpoint.BatchFetched)
	f.Hooks.log().Info("fetch lease done", "host", in.Host, "crawl", ci.ID, "chunk", len(b.urls),
		"requests", res.Requests, "fetched", res.Fetched, "notModified", res.NotModified, "errors", res.Errors,
		"skipped", res.Skipped, "deferred", res.Deferred, "lastError", res.LastError)
	return res, err
}
