package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/testweb"
)

// Hostile sites (gzip bomb, 25 MB page, drip feed, slow answers, resets, binary as HTML, huge
// header sets, malformed HTML) cost the crawler only their own time: the other hosts' request
// rates with hostile.test in the crawl stay within 10% of a crawl without it.
func TestHostileHostsDoNotSlowOthers(t *testing.T) {
	rate := func(withHostile bool) map[string]float64 {
		wc := testweb.DefaultConfig()
		wc.Hosts, wc.Pages = 6, 15
		wc.DefaultDelay, wc.SlowRobots = 200*time.Millisecond, time.Second
		s := newStack(t, wc)
		seeds := []string{}
		for i := 0; i < wc.Hosts; i++ {
			seeds = append(seeds, "http://"+s.web.HostName(i)+"/")
		}
		if withHostile {
			seeds = append(seeds, "http://hostile.test/")
		}
		p := s.crawl(crawl.Spec{Seeds: seeds, Scope: crawl.ScopeHost, Delay: crawl.Duration(200 * time.Millisecond),
			BatchWindow: crawl.Duration(3 * time.Second), RequestTimeout: crawl.Duration(3 * time.Second), MaxBodyBytes: 2 << 20,
			MaxAttempts: 2, RetryBase: crawl.Duration(500 * time.Millisecond), HostIdleTimeout: crawl.Duration(10 * time.Second),
			ProgressInterval: crawl.Duration(time.Second)}, 3*time.Minute)
		if p.State != "done" {
			t.Fatalf("crawl: %+v", p)
		}
		if withHostile {
			if h := s.web.Audit().Report().Host("hostile.test"); h == nil || h.Requests < 5 {
				t.Fatalf("hostile.test was not crawled: %+v", h)
			}
		}
		// Each generic host's page requests per second, first to last (hosts whose robots.txt
		// keeps the crawler out have too few requests to time).
		rates := map[string]float64{}
		for i := 0; i < wc.Hosts; i++ {
			var first, last time.Time
			n := 0
			for _, r := range s.web.Audit().Requests(s.web.HostName(i)) {
				if r.Path == "/robots.txt" {
					continue
				}
				if n == 0 || r.Start.Before(first) {
					first = r.Start
				}
				if r.Start.After(last) {
					last = r.Start
				}
				n++
			}
			if n >= 10 {
				rates[s.web.HostName(i)] = float64(n-1) / last.Sub(first).Seconds()
			}
		}
		if v := s.web.Audit().Report().Violations(); v != 0 {
			t.Errorf("%d politeness violations", v)
		}
		return rates
	}
	base, hostile := rate(false), rate(true)
	var without, with float64
	for h, r := range base {
		without += r
		with += hostile[h]
	}
	if len(base) < 3 {
		t.Fatalf("only %d hosts to time: %v", len(base), base)
	}
	t.Logf("request rate summed over %d other hosts: %.2f/s without hostile.test, %.2f/s with it (%s)", len(base), without, with,
		fmt.Sprintf("%+.1f%%", 100*(with-without)/without))
	if with < 0.9*without {
		t.Errorf("hostile.test slowed the other hosts from %.2f to %.2f requests/s", without, with)
	}
}
