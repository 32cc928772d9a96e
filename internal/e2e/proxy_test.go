package e2e

import (
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
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
