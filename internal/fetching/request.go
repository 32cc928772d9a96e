package fetching

import (
	"context"
	"strings"
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/failpoint"
	"github.com/trawlerdev/trawler/internal/metrics"
	"github.com/trawlerdev/trawler/internal/store"
)

// The lease's last two steps: the request of a URL the gate let through (gate.go), and the
// record of every URL's outcome, with a request or without.

// request sends u's request at its slot's start, in the background: it holds its place among
// the requests in flight (b.sem, taken by ticket) until its answer is in. A failure on our
// side (Postgres, MinIO) stops the lease (leaseRun.fail).
func (b *leaseRun) request(ctx context.Context, i int, u crawl.Claimed, p pass, start time.Time) {
	if !p.obeys {
		b.f.Hooks.Count.Add(metrics.RobotsOverridden, 1)
	}
	b.recording.Add(1)
	go func() {
		defer b.recording.Done()
		o, eff, err := b.f.fetchOne(ctx, p.ci, u, start, b.sent(ctx, start), p.jar)
		if err != nil {
			<-b.sem
			b.endRequest()
			b.fail(err)
			return
		}
		// The response's effect on the host's pacing (a Retry-After) counts at once, and the
		// request's place is free: the next request need not wait for this one's body to
		// be stored. Its outcome is recorded once it is, even if the lease is being stopped.
		b.apply(eff)
		<-b.sem
		b.recordFetched(ctx, i, u, o, eff)
	}()
}

// recordFetched records a request's outcome once its body is stored (its segment written):
// the outcome refers to it.
func (b *leaseRun) recordFetched(ctx context.Context, i int, u crawl.Claimed, o store.FetchOutcome, eff effect) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	var err error
	if eff.stored != nil {
		err = eff.stored(rctx)
	}
	if err == nil {
		err = b.f.record(rctx, b.in.Host, o)
	}
	if err != nil {
		b.fail(err)
		return
	}
	failpoint.Hit(failpoint.FetchRecorded)
	b.f.observe(o)
	b.note(o)
	b.finish(i)
	if o.Err != "" {
		b.f.Hooks.log().Debug("fetch failed", "crawl", u.CrawlID, "host", b.in.Host, "url", u.URL, "error", o.Err, "state", o.State)
	}
}

// recordDecided records URL i's outcome reached without a request: skipped, deferred, or
// failed for want of a secret.
func (b *leaseRun) recordDecided(ctx context.Context, i int, o store.FetchOutcome) error {
	if err := b.f.record(ctx, b.in.Host, o); err != nil {
		return err
	}
	if o.State == crawl.URLSkipped && strings.HasPrefix(o.SkipReason, "robots.txt") {
		b.f.Hooks.Count.Add(metrics.RobotsBlocked, 1)
	}
	b.note(o)
	b.finish(i)
	return nil
}

// refuse skips every unfinished URL of a host none of whose addresses may be dialed (loopback,
// private, link-local, metadata…): not even robots.txt is requested.
func (b *leaseRun) refuse(ctx context.Context, why string) error {
	for i, u := range b.urls {
		if b.finished[i] {
			continue
		}
		o := store.FetchOutcome{CrawlID: u.CrawlID, Hash: u.Hash, URL: u.URL, Attempts: u.Attempts,
			State: crawl.URLSkipped, SkipReason: "blocked address", Err: why}
		if err := b.f.record(ctx, b.in.Host, o); err != nil {
			return err
		}
		b.note(o)
		b.f.Hooks.Count.Add(metrics.Refused, 1)
		b.mu.Lock()
		b.res.Skipped++
		b.mu.Unlock()
		b.finish(i)
	}
	return b.end(ctx)
}
