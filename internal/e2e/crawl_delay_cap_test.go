package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/testweb"
)

// A site's Crawl-delay is never shortened. slowpoke.test asks for a day between requests; a
// crawl that waits at most a second skips its pages with a counted reason after robots.txt
// (the audit requires the whole day between two requests), ends in seconds, and the host's
// status says why. An independent audit found a 45 s Crawl-delay met every 30 s: capped, then
// exceeded.
func TestACrawlDelayOverTheCapSkipsTheHost(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.Pages, wc.Specials, wc.GreedyDelay = 1, 3, false, true
	wc.DefaultDelay = 300 * time.Millisecond
	s := newStack(t, wc)
	p := s.crawl(crawl.Spec{Seeds: []string{"http://slowpoke.test/", "http://slowpoke.test/1"}, Scope: crawl.ScopeHost, Delay: crawl.Duration(wc.DefaultDelay),
		MaxCrawlDelay: crawl.Duration(time.Second), ProgressInterval: crawl.Duration(time.Second)}, 2*time.Minute)
	if p.State != crawl.CrawlDone || p.Pages != 0 {
		t.Fatalf("crawl of slowpoke.test: %+v", p)
	}
	reqs := s.web.Audit().Requests("slowpoke.test")
	if len(reqs) != 1 || reqs[0].Path != "/robots.txt" {
		t.Errorf("slowpoke.test saw %+v; want robots.txt alone", reqs)
	}
	var skipped int
	if err := s.store.Pool().QueryRow(context.Background(), `SELECT count(*) FROM urls WHERE crawl_id = $1 AND state = 'skipped' AND skip_reason = $2
			AND url = ANY($3)`, p.CrawlID, crawl.SkipCrawlDelay, []string{"http://slowpoke.test/", "http://slowpoke.test/1"}).Scan(&skipped); err != nil || skipped != 2 {
		t.Errorf("%d URLs skipped as %q (%v); want both seeds", skipped, crawl.SkipCrawlDelay, err)
	}
	checkNoPoliteness(t, s)
	v, err := s.tc.QueryWorkflow(context.Background(), crawl.HostWorkflowID(s.cfg.IDPrefix, "slowpoke.test"), "", crawl.QueryStatus)
	if err != nil {
		t.Fatal(err)
	}
	var st crawl.HostStatus
	if err := v.Get(&st); err != nil || !st.CrawlDelayCap {
		t.Errorf("host status %+v (%v): want the Crawl-delay over the cap reported", st, err)
	}
}

// A 45 s Crawl-delay under the default cap (a day) is kept to the second, and waited out by the
// host workflow's durable timers, not by a lease holding a fetch worker: each request after
// the first is its own lease, with a timer before it.
func TestALongCrawlDelayIsKeptByDurableTimers(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.Pages, wc.Specials, wc.GreedyDelay = 1, 3, false, true
	wc.DefaultDelay = 300 * time.Millisecond
	s := newStack(t, wc)
	p := s.crawl(crawl.Spec{Seeds: []string{"http://patient.test/"}, Scope: crawl.ScopeHost, Delay: crawl.Duration(wc.DefaultDelay),
		ProgressInterval: crawl.Duration(time.Second)}, 4*time.Minute)
	if p.State != crawl.CrawlDone || p.Pages != 1 {
		t.Fatalf("crawl of patient.test: %+v", p)
	}
	reqs := s.web.Audit().Requests("patient.test")
	if len(reqs) != 3 || reqs[0].Path != "/robots.txt" {
		t.Fatalf("patient.test saw %+v; want robots.txt, / and /sitemap.xml", reqs)
	}
	for i := 1; i < len(reqs); i++ {
		gap := reqs[i].Start.Sub(reqs[i-1].Start)
		t.Logf("%s then %s: %s apart", reqs[i-1].Path, reqs[i].Path, gap.Round(time.Millisecond))
		if gap < testweb.PatientDelay || gap > testweb.PatientDelay+10*time.Second {
			t.Errorf("%s then %s %s apart; want %s, to the second", reqs[i-1].Path, reqs[i].Path, gap, testweb.PatientDelay)
		}
	}
	checkNoPoliteness(t, s)
	// The host workflow's history: a lease per request (the first a local one), a durable
	// timer before each of the later ones.
	n := leasesOf(t, s, "patient.test")
	leases, timers := n.activity+n.local, n.timers
	t.Logf("host history: %d leases, %d timers", leases, timers)
	if leases < 2 || timers < 1 {
		t.Errorf("%d leases and %d timers: the 45 s waits were not the workflow's timers", leases, timers)
	}
}
