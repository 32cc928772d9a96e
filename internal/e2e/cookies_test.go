package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/failpoint"
	"github.com/trawlerdev/trawler/internal/testweb"
)

// With cookies on, the session cookie cookie.test's front page sets is sent with every page
// after it, and the host's jar is in Postgres for whichever worker fetches it next; with
// cookies off, none is sent.
func TestCookiesAreKeptPerCrawlAndHost(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.Pages, wc.Specials, wc.Cookies = 1, 3, false, true
	wc.DefaultDelay = 50 * time.Millisecond
	s := newStack(t, wc)
	spec := crawl.Spec{Seeds: []string{"http://cookie.test/"}, Scope: crawl.ScopeHost, Delay: crawl.Duration(wc.DefaultDelay),
		ProgressInterval: crawl.Duration(time.Second)}

	off := s.crawl(spec, 2*time.Minute)
	with, without := s.web.CookieCounts()
	if off.State != "done" || with != 0 || without != testweb.CookiePages {
		t.Fatalf("cookies off: %s, %d pages with the cookie, %d without; want none with", off.State, with, without)
	}

	on := spec
	on.Name, on.Cookies = "cookies-on-"+time.Now().Format("150405.000"), true
	p := s.crawl(on, 2*time.Minute)
	with, without = s.web.CookieCounts()
	if p.State != "done" || with != testweb.CookiePages || without != testweb.CookiePages {
		t.Errorf("cookies on: %s, %d pages with the cookie (want %d), %d without in all (want only the first crawl's)",
			p.State, with, testweb.CookiePages, without)
	}
	var n int
	if err := s.store.Pool().QueryRow(context.Background(), `SELECT jsonb_array_length(cookies) FROM cookie_jars WHERE crawl_id = $1 AND host = 'cookie.test'`,
		p.CrawlID).Scan(&n); err != nil || n != 1 {
		t.Errorf("the crawl's jar for cookie.test holds %d headers (%v); want the one session cookie", n, err)
	}
}

// A host's jar survives its fetch worker's death: the worker is killed right after it records
// its second page, and the worker that takes the host over sends the session cookie with every
// page after, having rebuilt the jar from Postgres.
func TestCookiesSurviveAFetchWorkerKill(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.Pages, wc.Specials, wc.Cookies = 1, 3, false, true
	wc.DefaultDelay = 200 * time.Millisecond
	s := newStackWithoutWorkers(t, wc)
	bin := buildBinary(t, "trawler-worker", "./workers")
	superviseWorker(t, s, bin, "workflow,process")
	fetch := superviseWorker(t, s, bin, "fetch")
	killed := make(chan bool, 1)
	go func() { killed <- fetch.killAt(failpoint.FetchRecorded+"#2", 2*time.Minute, nil) }()
	time.Sleep(3 * time.Second) // the armed worker is up
	p := s.crawl(crawl.Spec{Seeds: []string{"http://cookie.test/"}, Scope: crawl.ScopeHost, Delay: crawl.Duration(wc.DefaultDelay),
		Cookies: true, ProgressInterval: crawl.Duration(time.Second)}, 3*time.Minute)
	if !<-killed {
		t.Fatal("the fetch worker was not killed after its second page: the test proves nothing")
	}
	with, without := s.web.CookieCounts()
	t.Logf("%s: %d pages requested with the session cookie, %d without", p.State, with, without)
	if p.State != "done" || without != 0 || with < testweb.CookiePages {
		t.Errorf("after the kill: %s, %d pages with the cookie, %d without; want every page with it", p.State, with, without)
	}
}
