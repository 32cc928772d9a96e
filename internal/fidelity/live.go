package fidelity

import (
	"context"
	"net/url"
	"sync"
	"time"

	"github.com/trawlerdev/trawler/internal/fetch"
	"github.com/trawlerdev/trawler/internal/policy"
	"github.com/trawlerdev/trawler/internal/render"
	"github.com/trawlerdev/trawler/internal/urlnorm"
)

// maxHops is how many redirects an answer follows: the browser is given the last answer at
// the URL it asked for, live and replayed alike.
const maxHops = 5

// live answers a page's requests from the web, as a reader's browser gets them: each fetched
// by the crawl's client with its user agent, its own headers only to hosts in its scope and
// its proxy, one request at a time and at least the crawl's delay apart on each host.
type live struct {
	client *fetch.Client
	ci     *policy.Crawl
	delay  time.Duration

	mu   sync.Mutex
	last map[string]time.Time
}

func newLive(client *fetch.Client, ci *policy.Crawl) *live {
	return &live{client: client, ci: ci, delay: ci.Spec.Delay.D(), last: map[string]time.Time{}}
}

func (l *live) answer(ctx context.Context, req render.Request) render.Answer {
	target := req.URL
	for range maxHops + 1 {
		u, err := url.Parse(target)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
			return render.Answer{Block: "not http(s)"}
		}
		resp, err := l.get(ctx, target)
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

// get fetches one URL, after the crawl's delay since the host's last request.
func (l *live) get(ctx context.Context, target string) (*fetch.Response, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	host := urlnorm.Authority(target)
	if wait := time.Until(l.last[host].Add(l.delay)); wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
	}
	defer func() { l.last[host] = time.Now() }()
	spec := l.ci.Spec
	return l.client.Get(ctx, fetch.Request{URL: target, UserAgent: l.ci.UserAgent, Header: l.ci.HeaderFor(host), Proxy: l.ci.Proxy,
		MaxBytes: spec.MaxBodyBytes, Timeout: spec.RequestTimeout.D()})
}
