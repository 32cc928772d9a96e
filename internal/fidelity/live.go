package fidelity

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/fetch"
	"github.com/trawlerdev/trawler/internal/policy"
	"github.com/trawlerdev/trawler/internal/render"
	"github.com/trawlerdev/trawler/internal/robots"
	"github.com/trawlerdev/trawler/internal/urlnorm"
)

// maxHops is how many redirects an answer follows: the browser is given the last answer at
// the URL it asked for, live and replayed alike.
const maxHops = 5

// live answers a page's requests from the web, as a reader's browser gets them, within the
// crawl's rules: each URL (and each redirect hop) judged as the crawl judges a page's
// requisite (its deny lists and allowed ports; robots.txt as the crawl last read it for the
// host), fetched by the crawl's client with its user agent, its own headers only to hosts in
// its scope, its proxy, at most maxBytes of body, one request at a time and at least the
// crawl's delay apart on each host.
type live struct {
	m        *Measurer
	ci       *policy.Crawl
	delay    time.Duration
	maxBytes int64

	mu     sync.Mutex
	page   string // the page being looked at (normalized), and how its document was answered
	answer string
	last   map[string]time.Time
	robots map[string]*robots.Rules // by scheme and host, as the crawl last read them (nil: none)
}

func newLive(m *Measurer, ci *policy.Crawl) *live {
	maxBytes := ci.Spec.MaxBodyBytes
	if m.MaxBytes > 0 && m.MaxBytes < maxBytes {
		maxBytes = m.MaxBytes
	}
	return &live{m: m, ci: ci, delay: ci.Spec.Delay.D(), maxBytes: maxBytes, last: map[string]time.Time{},
		robots: map[string]*robots.Rules{}}
}

// look starts the look at a page.
func (l *live) look(page string) {
	n, _ := l.m.Norm.Normalize(page)
	l.mu.Lock()
	l.page, l.answer = n, "not requested"
	l.mu.Unlock()
}

// pageAnswer is how the page's own document was answered: "" for a 2xx.
func (l *live) pageAnswer() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.answer
}

func (l *live) serve(ctx context.Context, req render.Request) render.Answer {
	a := l.fetch(ctx, req)
	if n, err := l.m.Norm.Normalize(req.URL); err == nil {
		l.mu.Lock()
		if n == l.page && l.answer != "" {
			switch {
			case a.Block != "":
				l.answer = "its document was not fetched: " + a.Block
			case a.Status < 200 || a.Status > 299:
				l.answer = fmt.Sprintf("its document answered HTTP %d", a.Status)
			default:
				l.answer = ""
			}
		}
		l.mu.Unlock()
	}
	return a
}

func (l *live) fetch(ctx context.Context, req render.Request) render.Answer {
	target := req.URL
	for range maxHops + 1 {
		// Judged and keyed by its normalized form: a fragment or an odd spelling of a host
		// must not pass a header to another host or dodge its pace.
		n, err := l.m.Norm.Normalize(target)
		if err != nil {
			return render.Answer{Block: "unparseable URL"}
		}
		if why := l.judge(ctx, n); why != "" {
			return render.Answer{Block: why}
		}
		resp, err := l.get(ctx, n)
		if err != nil {
			resp.Release()
			return render.Answer{Block: "fetch: " + err.Error()}
		}
		if resp.Status >= 300 && resp.Status < 400 && resp.Location != "" {
			target = resp.Location
			resp.Release()
			continue
		}
		return render.Answer{Status: resp.Status, ContentType: resp.ContentType, Body: resp.Body, Release: resp.Release}
	}
	return render.Answer{Block: "too many redirects"}
}

// judge says why the crawl would not fetch u as a page's requisite ("": it would).
func (l *live) judge(ctx context.Context, u string) string {
	pu, err := url.Parse(u)
	if err != nil || (pu.Scheme != "http" && pu.Scheme != "https") {
		return "not http(s)"
	}
	if why := l.ci.Admissible(l.m.Crawls.Candidate(u, 0, 0, crawl.SourceEmbed)); why != "" {
		return why
	}
	host := urlnorm.Authority(u)
	if !l.ci.ObeysRobots(host) {
		return ""
	}
	rules, err := l.rules(ctx, pu.Scheme, host)
	if err != nil {
		return "robots.txt: " + err.Error()
	}
	if rules != nil && !rules.Allowed(pu.RequestURI()) {
		return "robots.txt"
	}
	return ""
}

// rules are the host's robots.txt rules as the crawl last read them (nil: it never did).
func (l *live) rules(ctx context.Context, scheme, host string) (*robots.Rules, error) {
	key := scheme + "://" + host
	l.mu.Lock()
	r, ok := l.robots[key]
	l.mu.Unlock()
	if ok {
		return r, nil
	}
	cached, err := l.m.Store.Hosts().HostRobots(ctx, host, scheme)
	if err != nil {
		return nil, err
	}
	if cached != nil {
		r = robots.FromStatus(cached.Status, []byte(cached.Body), l.ci.Token)
	}
	l.mu.Lock()
	l.robots[key] = r
	l.mu.Unlock()
	return r, nil
}

// get fetches one URL, after the crawl's delay since the host's last request.
func (l *live) get(ctx context.Context, u string) (*fetch.Response, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	host := urlnorm.Authority(u)
	if wait := time.Until(l.last[host].Add(l.delay)); wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
	}
	resp, err := l.m.Client.Get(ctx, fetch.Request{URL: u, UserAgent: l.ci.UserAgent, Header: l.ci.HeaderFor(host), Proxy: l.ci.Proxy,
		MaxBytes: l.maxBytes, Timeout: l.ci.Spec.RequestTimeout.D()})
	l.last[host] = time.Now()
	if err == nil && (resp.Status == http.StatusTooManyRequests || resp.Status == http.StatusServiceUnavailable) {
		// The host asks us to slow down: its next request waits what it asked (within reason).
		l.last[host] = l.last[host].Add(min(resp.RetryAfter, time.Minute))
	}
	return resp, err
}
