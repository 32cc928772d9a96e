package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/testenv"
	"github.com/trawlerdev/trawler/internal/testweb"
)

// A crawl through an outbound proxy (a forwarding proxy on loopback in front of the test web)
// reaches its pages only through it: robots.txt and every page arrive marked by the proxy,
// one forwarded request each, politely paced as ever.
func TestACrawlThroughAProxyReachesItsPagesOnlyThroughIt(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.Pages, wc.Specials = 2, 10, false
	wc.DefaultDelay = 100 * time.Millisecond
	s := newStackWithoutWorkers(t, wc)
	px, err := testweb.StartProxy(s.srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = px.Close() })
	// The worker's own proxy (TRAWLER_PROXY), which the spec names too: a proxy on loopback is
	// trusted only as the worker's.
	s.cfg.Proxy = px.URL()
	s.startWorkers(s.cfg)
	p := s.crawl(crawl.Spec{Seeds: []string{"http://" + s.web.HostName(0) + "/"}, Scope: crawl.ScopeAny,
		Delay: crawl.Duration(wc.DefaultDelay), Proxy: px.URL(), ProgressInterval: crawl.Duration(time.Second)}, 3*time.Minute)
	if p.State != "done" || p.Pages < 10 {
		t.Fatalf("crawl through the proxy: %+v", p)
	}
	var total, direct int
	for h := range wc.Hosts {
		for _, r := range s.web.Audit().Requests(s.web.HostName(h)) {
			total++
			if !r.Proxied {
				direct++
				t.Errorf("%s%s reached the test web without the proxy", r.Host, r.Path)
			}
		}
	}
	t.Logf("%d requests, %d forwarded by the proxy, %d pages", total, px.Forwarded(), p.Pages)
	if total == 0 || int64(total) != px.Forwarded() {
		t.Errorf("%d requests at the test web, %d forwarded by the proxy: want the same, and some", total, px.Forwarded())
	}
	checkNoPoliteness(t, s)
}

// A crawl whose proxy the address guard refuses fails at its start, with the reason, from
// `temporal workflow start` as from `trawler crawl` (starter's tests); one whose proxy is down
// ends with its URLs dead-lettered as network errors at the proxy, counted as errors.
func TestARefusedOrDeadProxyEndsTheCrawl(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.Pages, wc.Specials = 2, 3, false
	s := newStackWithoutWorkers(t, wc)
	dead := "http://" + testenv.FreeAddr(t) // nothing listens there
	s.cfg.Proxy = dead                      // the workers' own: trusted, so dialed, and down
	s.startWorkers(s.cfg)
	seeds := []string{"http://" + s.web.HostName(0) + "/", "http://" + s.web.HostName(1) + "/"}

	refused := s.start(crawl.Spec{Seeds: seeds, Proxy: "http://" + testenv.FreeAddr(t)})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var p crawl.CrawlProgress
	if err := refused.Get(ctx, &p); err == nil || !strings.Contains(err.Error(), "address guard refuses") {
		t.Errorf("a crawl through a refused proxy: %v; want it failed at its start with the reason", err)
	}

	p = s.crawl(crawl.Spec{Seeds: seeds, Scope: crawl.ScopeHost, MaxAttempts: 2, RetryBase: crawl.Duration(500 * time.Millisecond),
		HostIdleTimeout: crawl.Duration(10 * time.Second), ProgressInterval: crawl.Duration(time.Second)}, 3*time.Minute)
	if p.State != crawl.CrawlDone || p.Pending != 0 || p.Dead != 2 || p.Errors < 2 {
		t.Fatalf("a crawl through a dead proxy ended %s: %d pending, %d dead, %d errors; want done, both seeds dead-lettered", p.State, p.Pending, p.Dead, p.Errors)
	}
	letters, err := s.store.Fetches().DeadLetters(context.Background(), p.CrawlID, 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range letters {
		if !strings.Contains(d.Reason, "proxy "+dead) {
			t.Errorf("dead letter %s: %q; want the proxy's failure", d.URL, d.Reason)
		}
	}
	if n := len(s.web.Audit().Requests(s.web.HostName(0))); n != 0 {
		t.Errorf("%d requests reached the test web around the proxy", n)
	}
}
