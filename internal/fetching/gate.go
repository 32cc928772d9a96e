package fetching

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/pacing"
	"github.com/trawlerdev/trawler/internal/policy"
	"github.com/trawlerdev/trawler/internal/robots"
	"github.com/trawlerdev/trawler/internal/store"
)

// The lease's second step, after the claim (chunks.go): the gate decides, URL by URL, whether
// a request goes — the crawl's secrets, robots.txt, its sitemaps, the crawl's pacing and
// cookies (gate.check), then, with a place among the requests in flight, a Retry-After,
// robots.txt's verdict, the host's schedule and a pause (leaseRun.ticket). What passes is
// requested and recorded (request.go).

// gate holds what one lease learns once and asks for every URL: robots.txt per scheme
// (RFC 9309 §2.3), its rules per product token (crawls may name different ones), both per
// crawl — robots.txt is asked for through the crawl's proxy, its redirects judged by the
// crawl's deny lists and ports, so what one crawl brought back (its proxy's failure, a hop
// it refused) is not another crawl's answer — and whose sitemaps are settled.
type gate struct {
	b        *leaseRun
	rules    map[rulesKey]*robots.Rules
	cached   map[cachedKey]*store.Robots
	sitemaps map[string]bool // crawls whose sitemap discovery on this host is settled
}

type rulesKey struct{ scheme, token, crawl string }
type cachedKey struct{ scheme, crawl string }

func newGate(b *leaseRun) *gate {
	return &gate{b: b, rules: map[rulesKey]*robots.Rules{}, cached: map[cachedKey]*store.Robots{}, sitemaps: map[string]bool{}}
}

// pass is what the gate let through for one URL: the crawl's policy, the robots.txt rules that
// judge the URL, whether the crawl obeys them on this host, and its cookies. decided holds an
// outcome reached without a request (a secret this worker cannot read), to be recorded as is.
type pass struct {
	ci      *policy.Crawl
	rules   *robots.Rules
	obeys   bool
	jar     *cookieJar
	decided *store.FetchOutcome
}

// check is the gate's first half, before the URL takes a place among the requests in flight:
// it may request robots.txt (alone, after the requests in flight) and read the crawl's pacing
// again.
func (g *gate) check(ctx context.Context, i int, u crawl.Claimed) (pass, error) {
	b, f := g.b, g.b.f
	ci, err := f.Crawls.Get(ctx, u.CrawlID)
	if err != nil {
		return pass{}, err
	}
	if ci.Unresolved != "" {
		// A secret the spec names is not readable here: no request goes without it.
		o := b.unresolved(ci, u)
		return pass{ci: ci, decided: &o}, nil
	}
	p := pass{ci: ci, obeys: ci.ObeysRobots(b.in.Host)}
	if p.rules, err = g.robotsRules(ctx, i, u, ci, p.obeys); err != nil {
		return pass{}, err
	}
	if !g.sitemaps[ci.ID] {
		g.sitemaps[ci.ID] = true
		if err := f.discoverSitemaps(ctx, ci, b.in.Host, g.cached[cachedKey{schemeOf(u.URL), ci.ID}], u.URL); err != nil {
			return pass{}, err
		}
	}
	if err := b.repace(ctx); err != nil { // a crawl's throttle, or its end, mid-chunk
		return pass{}, err
	}
	p.jar, err = b.cookies(ctx, ci) // (read before the slot is booked: the request leaves on time)
	return p, err
}

// robotsRules are the rules that judge u for its crawl: robots.txt from the host's cache, or
// requested when the cache has expired (before any page of its scheme, under the host's
// schedule). A crawl's robotsOverride that names the host (the operator's own site) neither
// requests nor obeys it; the delay still paces every request.
func (g *gate) robotsRules(ctx context.Context, i int, u crawl.Claimed, ci *policy.Crawl, obeys bool) (*robots.Rules, error) {
	b, f := g.b, g.b.f
	scheme := schemeOf(u.URL)
	rk, ck := rulesKey{scheme, ci.Token, ci.ID}, cachedKey{scheme, ci.ID}
	if rules := g.rules[rk]; rules != nil {
		return rules, nil
	}
	if !obeys {
		rules := robots.FromStatus(http.StatusNotFound, nil, ci.Token) // allows all
		g.rules[rk] = rules
		f.Hooks.log().Warn("robots.txt not obeyed: the crawl's robotsOverride names the host", "crawl", ci.ID, "host", b.in.Host)
		return rules, nil
	}
	cached := g.cached[ck]
	if cached == nil || f.clock().Now().After(cached.ExpiresAt) {
		b.drain() // robots.txt alone, before any page of its scheme
		b.mu.Lock()
		b.cursor = i
		b.mu.Unlock()
		var err error
		if cached, err = f.robots(ctx, b, u.URL, ci); err != nil {
			return nil, err
		}
		g.cached[ck] = cached
	}
	rules := robots.FromStatus(cached.Status, []byte(cached.Body), ci.Token)
	g.rules[rk] = rules
	if d := rules.CrawlDelay; d > 0 {
		// One server answers both schemes: the larger Crawl-delay paces them all. A crawl
		// that will not wait that long skips the host's URLs (withoutRequest) and does not
		// slow the host for the others.
		b.mu.Lock()
		if pacing.CrawlDelayOver(d, ci.Spec.MaxCrawlDelay.D()) {
			b.res.CrawlDelayCapped = true
		} else if d := pacing.CrawlDelayPace(d).Delay; d > b.res.CrawlDelay {
			b.res.CrawlDelay = d
		}
		b.delayRaisedLocked()
		b.mu.Unlock()
	}
	return rules, nil
}

// ticket is the gate's word on one URL once it holds a place among the requests in flight.
type ticket struct {
	start   time.Time           // the request's booked start; it keeps its place (request gives it back)
	decided *store.FetchOutcome // no request: the outcome to record
	release bool                // its crawl was paused since the claim: the crawl's URLs go back
	done    bool                // nothing to do: fetched already by an attempt that died, or stopped
	far     bool                // the host's next slot is far: the lease ends, the workflow's timer waits
}

// ticket takes a place among the requests in flight first, so a response that arrives
// meanwhile (a Retry-After) can still keep the URL from being requested; then robots.txt's
// verdict, and the host's slot, booked and waited for. The crawl may have been paused or the
// URL blocked since the lease claimed it, or an attempt of this lease that died fetched it
// already (its page waits for the crawl's processing): their states come with the slot, in
// the same round trip.
func (b *leaseRun) ticket(ctx context.Context, i int, u crawl.Claimed, p pass) (ticket, error) {
	b.sem <- struct{}{}
	for {
		if o, skip := b.withoutRequest(p.ci, u, p.rules); skip {
			<-b.sem
			return ticket{decided: &o}, nil
		}
		slot, err := b.takeFor(ctx, i)
		switch {
		case errors.Is(err, errDeferred):
			continue // a Retry-After came in: withoutRequest defers the URL
		case errors.Is(err, errSlotFar):
			<-b.sem
			return ticket{far: true}, nil
		case err != nil:
			<-b.sem
			return ticket{}, err
		}
		switch {
		case slot.URLState == crawl.URLClaimed && slot.CrawlState == crawl.CrawlPaused:
			// Paused since the claim: this and the crawl's other URLs of the lease go back to
			// the queue now, not one slot at a time.
			b.endRequest()
			<-b.sem
			return ticket{release: true}, nil
		case slot.URLState != crawl.URLClaimed:
			b.endRequest()
			<-b.sem
			return ticket{done: true}, nil
		}
		return ticket{start: slot.Start}, nil
	}
}
