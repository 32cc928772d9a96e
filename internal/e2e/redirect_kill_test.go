package e2e

import (
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/failpoint"
	"github.com/trawlerdev/trawler/internal/testenv"
	"github.com/trawlerdev/trawler/internal/testweb"
)

// A fetch worker killed between a redirect's target admitted and the redirect's outcome recorded
// loses nothing: the redirect is still claimed, its lease's retry fetches it again and records
// it, and the chain of five redirects still ends at its page. A failed admission fails the lease instead of recording the redirect done
// (TestAFailedAdmissionFailsTheRedirectAndTheSitemap): a cluster chaos run lost /five/0 so.
func TestRedirectKilledBetweenAdmissionAndOutcomeLosesNothing(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.Pages, wc.DefaultDelay = 2, 3, 200*time.Millisecond
	s := newStackWithoutWorkers(t, wc)
	bin := buildBinary(t, "trawler-worker", "./workers")
	workers := map[string]*supervised{}
	for _, role := range []string{"workflow", "fetch", "process"} {
		workers[role] = superviseWorker(t, s, bin, role)
	}
	seeds := []string{"http://redirect.test/"}
	run := s.start(crawl.Spec{Name: testenv.Unique("redirect"), Seeds: seeds, Scope: crawl.ScopeHost,
		Delay: crawl.Duration(200 * time.Millisecond), RequestTimeout: crawl.Duration(3 * time.Second), MaxAttempts: 3,
		RetryBase: crawl.Duration(500 * time.Millisecond), HostIdleTimeout: crawl.Duration(30 * time.Second),
		ProgressInterval: crawl.Duration(time.Second)})
	for _, point := range []string{failpoint.RedirectAdmitted + "#1", failpoint.RedirectAdmitted + "#3"} {
		if !workers["fetch"].killAt(point, 40*time.Second, nil) {
			t.Fatalf("the fetch worker never reached %s", point)
		}
	}
	p := s.wait(run, 4*time.Minute)
	if p.State != crawl.CrawlDone || p.Pending != 0 {
		t.Fatalf("crawl ended %s with %d pending", p.State, p.Pending)
	}
	stored := map[string]bool{}
	rows, err := s.store.Pool().Query(t.Context(), `SELECT u.url FROM documents d JOIN urls u USING (crawl_id, url_hash) WHERE d.crawl_id = $1`, p.CrawlID)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var u string
		_ = rows.Scan(&u)
		stored[u] = true
	}
	rows.Close()
	for _, u := range []string{"http://redirect.test/", "http://redirect.test/five/0"} {
		if !stored[u] {
			t.Errorf("lost: %s (stored %d pages)", u, len(stored))
		}
	}
	checkNoPoliteness(t, s)
}
