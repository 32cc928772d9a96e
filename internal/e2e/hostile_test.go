package e2e

import (
	"context"
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

// A host that answers one page with a 900 KiB status line and another with a 900 KiB ETag and
// Last-Modified, between ordinary pages: the crawl ends with the ordinary pages stored, the
// status line's page dead-lettered as a network error, no string a lease result carries or a
// table stores over its cap, and no lease result or heartbeat near Temporal's payload limit.
func TestMegabyteStringsAreCapped(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.Pages, wc.Specials = 2, 2, true
	s := newStack(t, wc)
	p := s.crawl(crawl.Spec{Seeds: []string{"http://hostile.test/mega"}, Scope: crawl.ScopeHost, Delay: crawl.Duration(200 * time.Millisecond),
		RequestTimeout: crawl.Duration(3 * time.Second), MaxAttempts: 2, RetryBase: crawl.Duration(500 * time.Millisecond),
		HostIdleTimeout: crawl.Duration(10 * time.Second), ProgressInterval: crawl.Duration(time.Second)}, 3*time.Minute)
	if p.State != crawl.CrawlDone || p.Pending != 0 {
		t.Fatalf("crawl: %+v", p)
	}
	ctx := context.Background()
	states := map[string]string{}
	rows, err := s.store.Pool().Query(ctx, `SELECT url, state FROM urls WHERE crawl_id = $1`, p.CrawlID)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var u, st string
		_ = rows.Scan(&u, &st)
		states[u] = st
	}
	rows.Close()
	for _, u := range []string{"http://hostile.test/mega", "http://hostile.test/mega-etag", "http://hostile.test/mega-ok/1", "http://hostile.test/mega-ok/2"} {
		if states[u] != "done" {
			t.Errorf("%s ended %q; want fetched", u, states[u])
		}
	}
	if st := states["http://hostile.test/mega-status"]; st != "dead" {
		t.Errorf("the megabyte status line's page ended %q; want dead-lettered", st)
	}
	// The longest string each column holds.
	var longest int
	var where string
	err = s.store.Pool().QueryRow(ctx, `SELECT n, what FROM (
			SELECT max(length(error)) n, 'fetches.error' what FROM fetches
			UNION ALL SELECT max(length(last_error)), 'urls.last_error' FROM urls
			UNION ALL SELECT max(length(etag)), 'urls.etag' FROM urls
			UNION ALL SELECT max(length(last_modified)), 'urls.last_modified' FROM urls
			UNION ALL SELECT max(length(content_type)), 'fetches.content_type' FROM fetches
			UNION ALL SELECT max(length(reason)), 'dead_letters.reason' FROM dead_letters) x
		WHERE n IS NOT NULL ORDER BY n DESC LIMIT 1`).Scan(&longest, &where)
	if err != nil {
		t.Fatal(err)
	}
	if longest > crawl.MaxErrorBytes {
		t.Errorf("%s holds a %d-character string (cap %d)", where, longest, crawl.MaxErrorBytes)
	}
	// Every fetch lease's result and last heartbeat in the host's history.
	biggest := 0
	iter := s.tc.GetWorkflowHistory(ctx, crawl.HostWorkflowID(s.cfg.IDPrefix, "hostile.test"), "", false, 0)
	for iter.HasNext() {
		e, err := iter.Next()
		if err != nil {
			t.Fatal(err)
		}
		size := 0
		if a := e.GetActivityTaskCompletedEventAttributes(); a != nil {
			size = a.GetResult().Size()
		}
		if a := e.GetActivityTaskFailedEventAttributes(); a != nil {
			size = a.GetFailure().Size()
		}
		if a := e.GetActivityTaskTimedOutEventAttributes(); a != nil {
			size = a.GetFailure().Size()
		}
		biggest = max(biggest, size)
	}
	t.Logf("longest stored string %d characters (%s); largest lease result in history %d bytes", longest, where, biggest)
	if biggest == 0 || biggest > 64<<10 {
		t.Errorf("largest lease result %d bytes; want some, under 64 KiB", biggest)
	}
}
