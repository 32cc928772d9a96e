package fetching

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/fetch"
	"github.com/trawlerdev/trawler/internal/metrics"
	"github.com/trawlerdev/trawler/internal/policy"
	"github.com/trawlerdev/trawler/internal/robots"
	"github.com/trawlerdev/trawler/internal/store"
	"github.com/trawlerdev/trawler/internal/urlnorm"
)

// robots fetches and caches the host's robots.txt for the page's scheme: http:// and https://
// of a host have a file each (RFC 9309 §2.3), paced as requests of the one host.
func (f *Stage) robots(ctx context.Context, b *leaseRun, pageURL string, ci *policy.Crawl) (*store.Robots, error) {
	pu, err := url.Parse(pageURL)
	if err != nil {
		return nil, fmt.Errorf("robots.txt for %q: %w", pageURL, err)
	}
	cached, failing, err := f.Hosts.HostRobotsAndHealth(ctx, b.in.Host, pu.Scheme)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	b.healthKnown, b.failing = true, failing
	b.mu.Unlock()
	if cached != nil && f.clock().Now().Before(cached.ExpiresAt) {
		return cached, nil
	}
	target := pu.Scheme + "://" + pu.Host + "/robots.txt"
	now := f.clock().Now()
	r := &store.Robots{FetchedAt: now, ExpiresAt: now.Add(robots.TTL)}
	// Redirects are followed here, up to five (RFC 9309 §2.3.1.2), each hop a request under
	// the host's schedule so the host never sees two closer than its delay.
	var resp *fetch.Response
	// The last answer's body is copied (r.Body) by the time this returns.
	defer func() { resp.Release() }()
	var refused string // why a hop was not followed
	for hop := 0; ; hop++ {
		header := ci.HeaderFor(urlnorm.Authority(pageURL)) // (a host only a page's requisites are on gets none)
		if hop > 0 {
			// A hop is judged as a link would be (deny lists, ports), and the crawl's own
			// headers go only to hosts it crawls (policy.Crawl.Hop).
			why, own := ci.Hop(f.Crawls.Candidate(target, 0, 0, crawl.SourceSeed))
			if why != "" {
				refused = why
				break
			}
			if !own || (pu.Scheme == "https" && schemeOf(target) != "https") {
				header = nil // (nor in clear, after a redirect from https)
			}
		}
		var start time.Time
		sent := func(time.Time) {}
		other := f.otherHost(b.in.Host, target)
		if other != "" {
			// A hop to another host (example.com -> www.example.com) is a request to that host:
			// it takes that host's slot, as its own workflow's requests do.
			if start, err = f.takeOtherHost(ctx, other, b.delay()); err != nil {
				return nil, err
			}
		} else {
			if start, err = b.take(ctx); err != nil {
				return nil, err
			}
			sent = b.sent(ctx, start)
		}
		resp.Release() // the hop before: a redirect, read
		resp, err = f.Client.Get(ctx, fetch.Request{URL: target, UserAgent: ci.UserAgent, Header: header, Proxy: ci.Proxy, MaxBytes: robots.MaxBytes,
			Timeout: ci.Spec.RequestTimeout.D(), Sent: sent})
		if other == "" {
			b.endResponse()
		}
		if err != nil || resp.Status < 300 || resp.Status >= 400 || resp.Location == "" || hop == 5 {
			break
		}
		target = resp.Location
		resp.Release() // read: not held while the next hop waits for its slot
	}
	if err != nil && ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if errors.Is(err, fetch.ErrProxy) {
		// The crawl's proxy failed, not the host: nothing is learnt of its robots.txt (none is
		// saved for other crawls), and this lease's URLs fail as network errors.
		f.Hooks.log().Warn("robots.txt not asked for: the crawl's proxy failed", "crawl", ci.ID, "host", b.in.Host, "error", err)
		b.mu.Lock()
		if b.proxyErr == nil {
			b.proxyErr = map[string]string{}
		}
		b.proxyErr[ci.ProxyKey()] = crawl.ClipError(err.Error())
		b.mu.Unlock()
		return &store.Robots{FetchedAt: now, ExpiresAt: now.Add(robots.UnreachableTTL)}, nil
	}
	if isNoSuchHost(err) {
		b.mu.Lock()
		b.res.Gone = "dns"
		b.mu.Unlock()
	}
	switch {
	case err != nil || resp == nil:
		r.Status = 0 // unreachable (network error, refused address): complete disallow for now
	case resp.Status >= 300 && resp.Status < 400:
		// A redirect loop, a chain past five hops or a hop the crawl may not follow counts as
		// unreachable: the host is not crawled on rules nobody could read.
		r.Status = 0
	default:
		r.Status, r.Body = resp.Status, string(resp.Body)
	}
	if refused != "" {
		// This crawl's rules refused the hop, not the host: nothing is saved for other crawls,
		// and this crawl's URLs wait as for an unreachable file, asking again next lease.
		f.Hooks.Count.Add(metrics.RobotsFetches, 1, "outcome", "redirect_refused")
		f.Hooks.log().Warn("robots.txt redirect not followed", "crawl", ci.ID, "host", b.in.Host,
			"to", crawl.Clip(target, crawl.MaxFieldBytes), "reason", refused)
		return &store.Robots{FetchedAt: now, ExpiresAt: now.Add(min(robots.UnreachableTTL, backoff(ci.Spec.RetryBase.D(), 1)))}, nil
	}
	f.Hooks.Count.Add(metrics.RobotsFetches, 1, "outcome", robotsOutcome(r.Status))
	if cached != nil && robots.KeepCached(cached.Status, cached.FetchedAt, r.Status, now) {
		// Unreachable now, but we hold a good copy: keep obeying it (§2.3.1.4), look again soon.
		r.Status, r.Body, r.FetchedAt, r.Sitemaps = cached.Status, cached.Body, cached.FetchedAt, cached.Sitemaps
		r.ExpiresAt = now.Add(min(robots.UnreachableTTL, backoff(ci.Spec.RetryBase.D(), 1)))
		if err := f.Hosts.SaveRobots(ctx, b.in.Host, pu.Scheme, *r, robots.FromStatus(r.Status, []byte(r.Body), ci.Token).CrawlDelay); err != nil {
			return nil, err
		}
		return r, nil
	}
	rules := robots.FromStatus(r.Status, []byte(r.Body), ci.Token)
	if rules.DisallowAll() {
		r.ExpiresAt = now.Add(min(robots.UnreachableTTL, backoff(ci.Spec.RetryBase.D(), 1)))
	}
	r.Sitemaps = rules.Sitemaps
	if err := f.Hosts.SaveRobots(ctx, b.in.Host, pu.Scheme, *r, rules.CrawlDelay); err != nil {
		return nil, err
	}
	return r, nil
}

// robotsOutcome classes a robots.txt answer as RFC 9309 reads it.
func robotsOutcome(status int) string {
	switch {
	case status >= 200 && status < 300:
		return "rules"
	case status >= 400 && status < 500:
		return "allow_all"
	}
	return "unreachable"
}

// schemeOf is an admitted URL's scheme (admission keeps only http and https, lower case).
func schemeOf(u string) string {
	scheme, _, _ := strings.Cut(u, "://")
	return scheme
}
