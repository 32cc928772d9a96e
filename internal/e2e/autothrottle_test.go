package e2e

import (
	"regexp"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/testweb"
)

var pagePath = regexp.MustCompile(`^/[0-9]+$`)

// With autoThrottle, a host whose answers slow from 10 ms to 800 ms is asked less often while
// it struggles, and more often again once it recovers: the audit's gaps grow and shrink, never
// below the crawl's delay.
func TestAutoThrottleGivesAStrugglingServerRoom(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.Pages, wc.Specials, wc.Sluggish = 1, 3, false, true
	wc.DefaultDelay = 100 * time.Millisecond
	s := newStack(t, wc)
	p := s.crawl(crawl.Spec{Seeds: []string{"http://sluggish.test/"}, Scope: crawl.ScopeHost, Delay: crawl.Duration(wc.DefaultDelay),
		AutoThrottle: 2, MaxCrawlDelay: crawl.Duration(5 * time.Second), ProgressInterval: crawl.Duration(time.Second)}, 3*time.Minute)
	if p.State != "done" || p.Pages != testweb.SluggishPages {
		t.Fatalf("crawl of sluggish.test: %+v", p)
	}
	var pages []testweb.Request
	for _, r := range s.web.Audit().Requests("sluggish.test") {
		if r.Path == "/" || pagePath.MatchString(r.Path) { // its pages (not robots.txt, nor a look for /sitemap.xml)
			pages = append(pages, r)
		}
	}
	if len(pages) != testweb.SluggishPages {
		t.Fatalf("%d page requests, want %d", len(pages), testweb.SluggishPages)
	}
	gap := func(i int) time.Duration { return pages[i].Start.Sub(pages[i-1].Start) }
	var fast, peak, last time.Duration
	for i := 2; i < testweb.SluggishFrom; i++ { // between fast answers, before the struggle
		fast = max(fast, gap(i))
	}
	for i := testweb.SluggishFrom; i < testweb.SluggishFrom+testweb.SluggishCount; i++ {
		peak = max(peak, gap(i))
	}
	last = gap(len(pages) - 1)
	var gaps []time.Duration
	for i := 1; i < len(pages); i++ {
		gaps = append(gaps, gap(i).Round(time.Millisecond))
	}
	t.Logf("gaps between page requests: %v", gaps)
	if peak < 3*fast || peak < 2*time.Second {
		t.Errorf("the largest gap while the server struggled was %s (before: %s); want k × its 800 ms answers on top of them", peak, fast)
	}
	if last > peak/2 {
		t.Errorf("the last gap was %s, the peak %s: want it to shrink as the server recovers", last, peak)
	}
	checkNoPoliteness(t, s)
}
