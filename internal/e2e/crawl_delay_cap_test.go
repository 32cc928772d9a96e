package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/testweb"
)

// robots.txt's Crawl-delay is capped by the crawl's maxCrawlDelay: slowpoke.test asks for a
// day between requests, the crawl caps it at a second, so its five pages come about a second
// apart (never closer: the audit requires the cap) and the crawl ends in seconds, not days.
// The host's status says the cap applied.
func TestCrawlDelayIsCapped(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.Pages, wc.Specials, wc.GreedyDelay = 1, 3, false, true
	wc.DefaultDelay = 300 * time.Millisecond
	s := newStack(t, wc)
	start := time.Now()
	p := s.crawl(crawl.Spec{Seeds: []string{"http://slowpoke.test/"}, Scope: crawl.ScopeHost, Delay: crawl.Duration(wc.DefaultDelay),
		MaxCrawlDelay: crawl.Duration(testweb.SlowpokeCap), ProgressInterval: crawl.Duration(time.Second)}, 2*time.Minute)
	if p.State != "done" || p.Pages != int64(1+len(testweb.SlowpokePages)) {
		t.Fatalf("crawl of slowpoke.test: %+v", p)
	}
	reqs := s.web.Audit().Requests("slowpoke.test")
	var maxGap time.Duration
	for i := 1; i < len(reqs); i++ {
		maxGap = max(maxGap, reqs[i].Start.Sub(reqs[i-1].Start))
	}
	t.Logf("%d requests in %s, largest gap %s", len(reqs), time.Since(start).Round(time.Millisecond), maxGap)
	if maxGap > 20*time.Second {
		t.Errorf("requests %s apart: the Crawl-delay of a day was not capped at %s", maxGap, testweb.SlowpokeCap)
	}
	checkNoPoliteness(t, s) // gaps of at least the cap, robots.txt first
	v, err := s.tc.QueryWorkflow(context.Background(), crawl.HostWorkflowID(s.cfg.IDPrefix, "slowpoke.test"), "", crawl.QueryStatus)
	if err != nil {
		t.Fatal(err)
	}
	var st crawl.HostStatus
	if err := v.Get(&st); err != nil || !st.CrawlDelayCap {
		t.Errorf("host status %+v (%v): want the Crawl-delay cap reported", st, err)
	}
}
