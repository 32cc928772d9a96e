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

// A crawl's own headers go only to hosts it may fetch pages from. moved.test's robots.txt
// redirects to bytes.test's: in a crawl scoped to moved.test, that hop is a request to a
// stranger and goes without the crawl's secret (an independent audit saw an API key reach a
// host that was no seed this way); with bytes.test denied, the hop is not taken at all and
// moved.test's pages are not fetched on rules nobody read.
func TestRobotsRedirectCarriesNoSecretOutOfScope(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.Pages, wc.Specials, wc.Bytes = 1, 3, false, true
	wc.DefaultDelay = 200 * time.Millisecond
	s := newStack(t, wc)
	// The API key is named, not given: each worker reads it from its environment.
	t.Setenv("TRAWLER_TEST_CRAWL_KEY", "s3cret")
	spec := crawl.Spec{Seeds: []string{"http://moved.test/"}, Scope: crawl.ScopeHost,
		Headers: map[string]string{testweb.SecretHeader: "secret:env:TRAWLER_TEST_CRAWL_KEY", "Authorization": "Bearer t0ken"},
		Delay:   crawl.Duration(wc.DefaultDelay), MaxAttempts: 2, RetryBase: crawl.Duration(200 * time.Millisecond),
		ProgressInterval: crawl.Duration(time.Second)}

	denied := spec
	denied.DenyHosts = []string{"bytes.test"}
	p := s.crawl(denied, 2*time.Minute)
	if p.State != crawl.CrawlDone || p.Pending != 0 {
		t.Fatalf("crawl with the hop denied ended %s with %d pending", p.State, p.Pending)
	}
	if reqs := s.web.Audit().Requests("bytes.test"); len(reqs) != 0 {
		t.Errorf("a denied host was asked: %+v", reqs)
	}
	for _, r := range s.web.Audit().Requests("moved.test") {
		if r.Path != "/robots.txt" {
			t.Errorf("moved.test's %s was fetched on rules nobody read", r.Path)
		}
	}

	p = s.crawl(spec, 2*time.Minute)
	if p.State != crawl.CrawlDone || p.Fetched == 0 {
		t.Fatalf("crawl ended %s with %d fetched", p.State, p.Fetched)
	}
	pages := 0
	for _, r := range s.web.Audit().Requests("moved.test") {
		if !r.Secret {
			t.Errorf("moved.test's %s came without the crawl's headers", r.Path)
		}
		if r.Path == "/private/x" {
			t.Errorf("%s fetched: the rules bytes.test serves for moved.test forbid it", r.Path)
		}
		if r.Path == "/page" {
			pages++
		}
	}
	if pages != 1 {
		t.Errorf("moved.test's /page fetched %d times; want once", pages)
	}
	// The secret went on the wire to moved.test; no stored request head keeps it.
	var kept, heads int
	if err := s.store.Pool().QueryRow(context.Background(), `SELECT count(*) FILTER (WHERE position('s3cret' in encode(request_head, 'escape')) > 0
			OR position('t0ken' in encode(request_head, 'escape')) > 0), count(request_head) FROM fetches`).Scan(&kept, &heads); err != nil || heads == 0 || kept != 0 {
		t.Errorf("stored request heads: %d of %d keep the crawl's secret (%v)", kept, heads, err)
	}
	var specs int
	if err := s.store.Pool().QueryRow(context.Background(), `SELECT count(*) FROM crawls WHERE spec::text LIKE '%s3cret%'`).Scan(&specs); err != nil || specs != 0 {
		t.Errorf("%d recorded specs hold the named secret's value (%v)", specs, err)
	}
	reqs := s.web.Audit().Requests("bytes.test")
	if len(reqs) == 0 {
		t.Fatal("the redirect to bytes.test's robots.txt was not followed")
	}
	for _, r := range reqs {
		if r.Secret {
			t.Errorf("bytes.test (out of scope) received the crawl's secret headers on %s", r.Path)
		}
	}

	// A secret a worker cannot read: nothing is sent (not even robots.txt), each URL fails,
	// counted, and is dead-lettered with the reason.
	before := len(s.web.Audit().Requests("moved.test"))
	unread := spec
	unread.Name = "unread-" + testenv.Unique("s")
	unread.Seeds = []string{"http://moved.test/unread"}
	unread.Headers = map[string]string{testweb.SecretHeader: "secret:env:TRAWLER_TEST_UNSET_KEY"}
	p = s.crawl(unread, 2*time.Minute)
	if n := len(s.web.Audit().Requests("moved.test")) - before; n != 0 || p.State != crawl.CrawlDone {
		t.Errorf("a crawl whose secret is unreadable sent %d requests and ended %s", n, p.State)
	}
	dead, err := s.store.Fetches().DeadLetters(context.Background(), p.CrawlID, 10)
	if err != nil || len(dead) != 1 || !strings.Contains(dead[0].Reason+string(dead[0].Attempts), "TRAWLER_TEST_UNSET_KEY") {
		t.Errorf("dead letters %+v (%v): want the seed, naming the unset variable", dead, err)
	}
}
