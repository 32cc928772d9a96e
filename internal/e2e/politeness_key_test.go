package e2e

import (
	"slices"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/testweb"
)

// Keyed by domain, a.x.test and b.x.test keep one schedule between them: their host
// workflows run at once, yet no two of their requests start closer than the crawl's delay.
func TestDomainKeyedPolitenessKeepsOneGapAcrossSubdomains(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.Pages, wc.Specials = 1, 3, false
	s := newStack(t, wc)
	const delay = 500 * time.Millisecond
	p := s.crawl(crawl.Spec{Seeds: []string{"http://a.x.test/", "http://b.x.test/"}, Scope: crawl.ScopeDomain,
		Delay: crawl.Duration(delay), PolitenessKey: crawl.PolitenessDomain, ProgressInterval: crawl.Duration(time.Second)}, 2*time.Minute)
	if p.State != "done" {
		t.Fatalf("crawl: %+v", p)
	}
	var starts []time.Time
	for _, h := range []string{"a.x.test", "b.x.test"} {
		reqs := s.web.Audit().Requests(h)
		if len(reqs) < 2 {
			t.Fatalf("%s: %d requests; want robots.txt and its front page at least", h, len(reqs))
		}
		for _, r := range reqs {
			starts = append(starts, r.Start)
		}
	}
	slices.SortFunc(starts, func(a, b time.Time) int { return a.Compare(b) })
	for i := 1; i < len(starts); i++ {
		if gap := starts[i].Sub(starts[i-1]); gap < delay {
			t.Errorf("two requests to x.test's subdomains started %s apart; the delay is %s", gap, delay)
		}
	}
	t.Logf("%d requests across a.x.test and b.x.test, spanning %s", len(starts), starts[len(starts)-1].Sub(starts[0]).Round(time.Millisecond))
}
