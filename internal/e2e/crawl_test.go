package e2e

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/testenv"
	"github.com/trawlerdev/trawler/internal/testweb"
	"github.com/trawlerdev/trawler/internal/urlnorm"
)

// The whole loop against the test web (50 generic hosts and every special host): each allowed
// reachable page fetched exactly once and stored, robots.txt and delays respected, 500-forever
// pages dead-lettered after their retries, redirects to loopback refused.
func TestCrawlTheTestWeb(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.Pages = 50, 10
	wc.DefaultDelay = 300 * time.Millisecond
	wc.RetryAfter, wc.SlowRobots, wc.ChangePeriod = 2*time.Second, time.Second, time.Hour
	s := newStack(t, wc)
	spec := crawl.Spec{
		Seeds: s.web.Seeds(), Scope: crawl.ScopeAny, MaxPagesPerHost: 30,
		Delay: crawl.Duration(300 * time.Millisecond), BatchWindow: crawl.Duration(3 * time.Second),
		RequestTimeout: crawl.Duration(3 * time.Second), MaxBodyBytes: 2 << 20,
		MaxAttempts: 3, RetryBase: crawl.Duration(500 * time.Millisecond),
		HostIdleTimeout: crawl.Duration(10 * time.Second), ProgressInterval: crawl.Duration(time.Second),
	}
	start := time.Now()
	p := s.crawl(spec, 2*time.Minute)
	elapsed := time.Since(start)
	crawlID := p.CrawlID
	rep := s.web.Audit().Report()
	truth := s.web.Truth(s.web.Seeds())
	t.Logf("crawl %s: %s in %v; progress %+v", crawlID, p.State, elapsed.Round(time.Millisecond), p)
	t.Logf("audit: %+v", rep.Totals)

	if p.State != "done" || p.Pending != 0 {
		t.Fatalf("crawl did not finish cleanly: %+v", p)
	}
	tot := rep.Totals
	for name, v := range map[string]int{
		"gap violations": tot.GapViolations, "concurrency violations": tot.ConcurrencyViolations,
		"disallowed fetches": tot.Disallowed, "hosts whose first request was not robots.txt": tot.RobotsNotFirst,
		"Retry-After violations": tot.RetryAfterViolations, "repeat fetches": tot.Repeats,
		"requests to hosts outside the web (loopback redirect)": tot.UnknownHostRequests, "wrong User-Agent": tot.WrongUserAgent,
	} {
		if v != 0 {
			t.Errorf("%s: %d", name, v)
		}
	}
	for _, h := range rep.Hosts {
		if h.GapViolations+h.ConcurrencyViolations+h.Disallowed+h.Repeats > 0 || !h.RobotsFirst {
			t.Errorf("host %s: %+v", h.Host, h)
			for _, r := range s.web.Audit().Requests(h.Host) {
				t.Logf("  %s–%s %s %d", r.Start.Format("15:04:05.000"), r.End.Format("15:04:05.000"), r.Path, r.Status)
			}
		}
	}
	if tot.TrapRequests > spec.MaxPagesPerHost+1 {
		t.Errorf("trap host cost %d requests; budget %d", tot.TrapRequests, spec.MaxPagesPerHost)
	}
	traps := 0
	for reason, n := range p.Rejected {
		if strings.HasPrefix(reason, "trap:") {
			traps += n
		}
	}
	if traps == 0 || p.Rejected["out of scope"] != 0 {
		t.Errorf("rejections by reason: %v; want trap rejections (scope is any)", p.Rejected)
	}

	// Every truth page fetched (2xx) and stored, with its text; nothing outside the truth fetched
	// on the hosts the truth covers.
	ctx := context.Background()
	rows, err := s.store.Pool().Query(ctx, `SELECT u.url, d.body_key, coalesce(d.text_key, ''), d.noindex
		FROM urls u JOIN documents d USING (crawl_id, url_hash) WHERE u.crawl_id = $1`, crawlID)
	if err != nil {
		t.Fatal(err)
	}
	stored := map[string][2]string{} // by key form: a URL is stored as first requested, the truth spells it canonically
	noindex := map[string]bool{}
	norm := urlnorm.New(urlnorm.Default())
	for rows.Next() {
		var u, body, text string
		var ni bool
		if err := rows.Scan(&u, &body, &text, &ni); err != nil {
			t.Fatal(err)
		}
		if k, err := norm.Normalize(u); err == nil {
			u = k
		}
		stored[u] = [2]string{body, text}
		noindex[u] = ni
	}
	blobs := testenv.Blob(t) // a handle on the same MinIO
	_ = blobs
	var missing []string
	for _, u := range truth.Pages {
		d, ok := stored[u]
		if !ok {
			missing = append(missing, u)
			continue
		}
		if d[0] == "" || (d[1] == "" && !noindex[u]) {
			t.Errorf("%s: body key %q text key %q", u, d[0], d[1])
		}
	}
	if len(missing) > 0 {
		t.Errorf("%d of %d truth pages not stored, e.g. %v", len(missing), len(truth.Pages), missing[:min(10, len(missing))])
	}
	outside := map[string]bool{"trap.test": true, "hostile.test": true} // outside the truth by design
	for u := range stored {
		host := strings.SplitN(strings.TrimPrefix(u, "http://"), "/", 2)[0]
		if !outside[host] && !slices.Contains(truth.Pages, u) {
			t.Errorf("stored a page the truth does not have: %s", u)
		}
	}
	if !noindex["http://misc.test/noindex"] {
		t.Error("meta robots noindex not recorded")
	}

	// The redirect cap: a chain of exactly five redirects is followed to its page; the sixth
	// hop of a longer chain is refused, said on the URL that asked for it, and never requested.
	if _, ok := stored["http://redirect.test/five/0"]; !ok {
		t.Error("the end of a five-redirect chain was not stored")
	}
	var refused string
	if err := s.store.Pool().QueryRow(ctx, `SELECT coalesce(last_error, '') FROM urls WHERE crawl_id = $1 AND url = 'http://redirect.test/six/1'`,
		crawlID).Scan(&refused); err != nil || refused != "more than 5 redirects" {
		t.Errorf("the sixth hop's URL says %q (%v), want the cap's refusal", refused, err)
	}
	for _, r := range s.web.Audit().Requests("redirect.test") {
		if r.Path == "/six/0" {
			t.Error("the sixth redirect hop was requested")
		}
	}

	// 500-forever pages are dead letters, each with its three attempts.
	dl, err := s.store.Fetches().DeadLetters(ctx, crawlID, 100)
	if err != nil {
		t.Fatal(err)
	}
	dead := map[string]int{}
	for _, d := range dl {
		var attempts []map[string]any
		_ = json.Unmarshal(d.Attempts, &attempts)
		dead[d.URL] = len(attempts)
	}
	for _, u := range truth.Dead {
		if dead[u] != spec.MaxAttempts {
			t.Errorf("dead letter for %s: %d attempts recorded, want %d", u, dead[u], spec.MaxAttempts)
		}
	}
	for u := range dead {
		if !slices.Contains(truth.Dead, u) && !strings.HasPrefix(u, "http://hostile.test/") {
			t.Errorf("unexpected dead letter %s", u)
		}
	}

	// SSRF: redirects to loopback, IPv4-mapped loopback, a private address and the cloud
	// metadata address are refused at dial time: no request left, the URLs are skipped.
	var sent int
	_ = s.store.Pool().QueryRow(ctx, `SELECT count(*) FROM fetches f JOIN urls u USING (crawl_id, url_hash)
		WHERE f.crawl_id = $1 AND u.host NOT LIKE '%.test' AND u.host NOT LIKE '%.test:%'`, crawlID).Scan(&sent)
	blocked := map[string]string{}
	rows, err = s.store.Pool().Query(ctx, `SELECT url, state || ':' || coalesce(skip_reason, '') FROM urls
		WHERE crawl_id = $1 AND host NOT LIKE '%.test' AND host NOT LIKE '%.test:%'`, crawlID)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var u, st string
		_ = rows.Scan(&u, &st)
		blocked[u] = st
	}
	rows.Close()
	t.Logf("SSRF targets: %v", blocked)
	if sent != 0 || blocked["http://169.254.169.254/latest/meta-data/"] != "skipped:blocked address" ||
		blocked["http://10.0.0.1/admin"] != "skipped:blocked address" {
		t.Errorf("%d requests recorded to non-test hosts; redirect targets %v", sent, blocked)
	}

	checkDuplicates(t, s, crawlID, truth)
	responses, revisits := checkWARC(t, s, crawlID)
	t.Logf("WARC: %d response and %d revisit records", responses, revisits)

	allEvents := s.events()
	byType := byWorkflow(allEvents)
	events := 0
	for _, n := range byType {
		events += n
	}
	t.Logf("pages/s %.1f (%d fetched in %v); %d history events (%v) = %.2f events per fetched page",
		float64(p.Fetched)/elapsed.Seconds(), p.Fetched, elapsed.Round(time.Second), events, byType, float64(events)/float64(p.Fetched))
	t.Logf("events per page, most frequent: %s", topEvents(allEvents, p.Fetched, 12))
}
