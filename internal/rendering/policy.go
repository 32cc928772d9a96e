package rendering

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"sync"
	"time"

	"github.com/trawlerdev/trawler/internal/clock"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/fetch"
	"github.com/trawlerdev/trawler/internal/pacing"
	"github.com/trawlerdev/trawler/internal/policy"
	"github.com/trawlerdev/trawler/internal/render"
	"github.com/trawlerdev/trawler/internal/robots"
	"github.com/trawlerdev/trawler/internal/store"
	"github.com/trawlerdev/trawler/internal/urlnorm"
)

// pagePolicy answers the requests of one rendered page: its document from the capture; a
// subresource of its own host and scheme that robots.txt allows fetched by the worker, one at
// a time, each on a start booked on the host's schedule (and its address's, per-IP
// politeness) inside the page's deadline, paced by the one rule (pacing.Slowest); nothing
// else. Once the crawl is paused or stopped, the host asks to slow down (429/503), or its
// next start is past the deadline, the page's same-host requests stop.
type pagePolicy struct {
	r       *Stage
	ci      *policy.Crawl
	j       store.RenderJob
	page    string // the page's URL as requested
	scheme  string
	body    []byte
	rules   *robots.Rules
	delay   time.Duration // the host's pace, as its fetch leases have it
	ip      netip.Addr    // the address the host's requests count under (zero: no per-IP limit)
	fetchMu sync.Mutex    // held for a same-host request, from booking to response: one in flight
	stopped string        // under fetchMu: why the page's same-host requests stop ("": they don't)
	loads   loads         // under fetchMu: what the page was given, for the archive
}

func (r *Stage) newPagePolicy(ctx context.Context, ci *policy.Crawl, j store.RenderJob, pu *url.URL, body []byte) (*pagePolicy, error) {
	spec := ci.Spec
	cached, err := r.Hosts.HostRobots(ctx, j.Host, pu.Scheme)
	if err != nil {
		return nil, err
	}
	rules := robots.FromStatus(0, nil, ci.Token) // unknown: nothing allowed
	switch {
	case !ci.ObeysRobots(j.Host):
		rules = robots.FromStatus(http.StatusNotFound, nil, ci.Token) // robotsOverride: all allowed
	case cached != nil:
		rules = robots.FromStatus(cached.Status, []byte(cached.Body), ci.Token)
	}
	crawlDelay, err := r.Hosts.HostCrawlDelay(ctx, j.Host)
	if err != nil {
		return nil, err
	}
	delay := pacing.Slowest(pacing.OfCrawl(spec), pacing.CrawlDelayPace(crawlDelay)).Delay
	return &pagePolicy{r: r, ci: ci, j: j, page: pu.String(), scheme: pu.Scheme, body: body, rules: rules,
		delay: delay, ip: r.Schedule.IPOf(ctx, j.Host), loads: loads{fetchKey: j.FetchKey}}, nil
}

// answer is the page's render.Policy.
func (p *pagePolicy) answer(ctx context.Context, req render.Request) render.Answer {
	u, err := url.Parse(req.URL)
	switch {
	case err != nil:
		return render.Answer{Block: "unparseable URL"}
	case u.String() == p.page || (u.Fragment != "" && withoutFragment(u) == p.page):
		return render.Answer{ContentType: p.j.ContentType, Body: p.body}
	case u.Scheme != "http" && u.Scheme != "https":
		return render.Answer{Block: "scheme " + u.Scheme}
	case p.ci.Unresolved != "":
		return render.Answer{Block: "secret not readable on this worker"} // not without it, not around the proxy
	case urlnorm.Authority(req.URL) != p.j.Host:
		return render.Answer{Block: "third party"}
	case u.Scheme != p.scheme:
		return render.Answer{Block: "other scheme"} // its robots.txt is another file
	case !p.rules.Allowed(u.RequestURI()):
		return render.Answer{Block: "robots.txt"}
	}
	return p.fetch(ctx, req.URL)
}

// fetch requests one of the host's subresources on a booked start, one at a time.
func (p *pagePolicy) fetch(ctx context.Context, rawURL string) render.Answer {
	p.fetchMu.Lock()
	defer p.fetchMu.Unlock()
	if p.stopped != "" {
		return render.Answer{Block: p.stopped}
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = p.r.Clock.Now().Add(time.Minute)
	}
	slot, err := p.r.Schedule.BookRender(ctx, p.ci.SlotKey(p.j.Host), p.j.CrawlID, p.delay, p.ip, deadline)
	switch {
	case err != nil:
		return render.Answer{Block: "no slot: " + err.Error()}
	case slot.CrawlState != crawl.CrawlRunning:
		p.stopped = fmt.Sprintf("crawl %s", orGone(string(slot.CrawlState)))
		return render.Answer{Block: p.stopped}
	case !slot.Booked:
		p.stopped = "host's next start past the page's deadline"
		return render.Answer{Block: p.stopped}
	}
	if err := clock.SleepUntil(ctx, p.r.Clock, slot.Start); err != nil {
		// The page ended while it waited: its slot goes back to the host.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := p.r.Schedule.ReleaseRender(rctx, slot); err != nil {
			p.r.Hooks.log().Warn("render: give back an unused slot", "host", p.j.Host, "error", err)
		}
		p.stopped = "page ended"
		return render.Answer{Block: p.stopped}
	}
	spec := p.ci.Spec
	resp, err := p.r.Client.Get(ctx, fetch.Request{URL: rawURL, UserAgent: p.ci.UserAgent, Header: p.ci.Header, Proxy: p.ci.Proxy, MaxBytes: spec.MaxBodyBytes,
		Timeout: spec.RequestTimeout.D()})
	if err != nil {
		resp.Release()
		return render.Answer{Block: "fetch: " + err.Error()}
	}
	if resp.Status == 429 || resp.Status == 503 {
		// The host asked us to slow down: no more of this page's requests, and every other
		// booking of the host (fetch leases, other renders) waits its Retry-After.
		wait := min(resp.RetryAfter, time.Hour)
		if wait <= 0 {
			wait = spec.RetryBase.D()
		}
		// Not on the page's context: a 429 that came as the page ended still holds.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := p.r.Schedule.Defer(dctx, p.j.Host, p.r.Clock.Now().Add(wait)); err != nil {
			p.r.Hooks.log().Warn("render: defer the host", "host", p.j.Host, "error", err)
		}
		p.stopped = fmt.Sprintf("host answered HTTP %d", resp.Status)
	}
	if err := p.loads.add(rawURL, resp); err != nil {
		p.r.Hooks.log().Warn("render: record a load for the archive", "url", rawURL, "error", err)
	}
	return render.Answer{Status: resp.Status, ContentType: resp.ContentType, Body: resp.Body, Release: resp.Release}
}

func orGone(state string) string {
	if state == "" {
		return "gone"
	}
	return state
}

func withoutFragment(u *url.URL) string {
	c := *u
	c.Fragment = ""
	return c.String()
}
