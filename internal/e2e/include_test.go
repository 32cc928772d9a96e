package e2e

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/clock"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/policy"
	"github.com/trawlerdev/trawler/internal/testenv"
	"github.com/trawlerdev/trawler/internal/testweb"
)

// An include-only crawl ("only /p/ of these sites") requests and stores nothing outside its
// allow patterns but its seeds: every link, redirect and sitemap entry elsewhere is refused,
// counted under its own reason; and what the patterns include is crawled.
func TestAnIncludeOnlyCrawlStaysInsideItsPatterns(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.Pages, wc.Specials = 2, 40, false
	wc.DefaultDelay = 50 * time.Millisecond
	s := newStack(t, wc)
	seeds := []string{"http://" + s.web.HostName(0) + "/", "http://" + s.web.HostName(1) + "/"}
	p := s.crawl(crawl.Spec{Seeds: seeds, Scope: crawl.ScopeDomain, Delay: crawl.Duration(wc.DefaultDelay),
		AllowPatterns: []string{`^http://[^/]+/p/`}, ProgressInterval: crawl.Duration(time.Second)}, 3*time.Minute)
	if p.State != "done" {
		t.Fatalf("crawl: %+v", p)
	}
	inside := regexp.MustCompile(`^/p/`)
	var in, seedHits int
	for h := range 2 {
		for _, r := range s.web.Audit().Requests(s.web.HostName(h)) {
			switch {
			case r.Path == "/robots.txt", strings.HasPrefix(r.Path, "/sitemap"): // read for the pages they list
			case r.Path == "/":
				seedHits++
			case inside.MatchString(r.Path):
				in++
			default:
				t.Errorf("requested %s%s, outside the allow patterns", r.Host, r.Path)
			}
		}
	}
	rows, err := s.store.Pool().Query(context.Background(), `SELECT u.url FROM documents d JOIN urls u USING (crawl_id, url_hash) WHERE d.crawl_id = $1`, p.CrawlID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	stored := 0
	for rows.Next() {
		var u string
		if err := rows.Scan(&u); err != nil {
			t.Fatal(err)
		}
		stored++
		if !regexp.MustCompile(`^http://[^/]+/(p/.*)?$`).MatchString(u) {
			t.Errorf("stored %s, outside the allow patterns", u)
		}
	}
	t.Logf("%d requests inside, %d to seeds, %d documents; rejected %v", in, seedHits, stored, p.Rejected)
	if in < 10 || seedHits != 2 || p.Rejected[policy.RejectNotAllowed] == 0 {
		t.Errorf("%d pages inside fetched, seeds fetched %d times, %d refused by the patterns; want pages inside, both seeds, refusals counted",
			in, seedHits, p.Rejected[policy.RejectNotAllowed])
	}
}

// A spec that names a field Trawler does not know, started as an operator would with plain
// JSON (`temporal workflow start --input`), fails at once with the field and the nearest known
// one, and records nothing: the crawl asked for is not the one that would run.
func TestAnUnknownSpecFieldRefusesTheCrawl(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.Pages, wc.Specials = 1, 3, false
	s := newStack(t, wc)
	name := testenv.Unique("typo")
	input := json.RawMessage(`{"name":"` + name + `","seeds":["http://` + s.web.HostName(0) + `/"],"maxpages":5,"recrawl":{"intervall":"1h"}}`)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run, err := s.tc.ExecuteWorkflow(ctx, crawl.CrawlStart(s.cfg.IDPrefix, crawl.Spec{Name: name}, s.cfg.TaskQueue),
		crawl.CrawlWorkflowName, input)
	if err != nil {
		t.Fatal(err)
	}
	err = run.Get(ctx, nil)
	for _, want := range []string{"maxpages: unknown field; did you mean maxPages?", "recrawl.intervall: unknown field; did you mean recrawl.interval?"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("crawl ended with %v; want an error naming %q", err, want)
		}
	}
	var n int
	if err := s.store.Pool().QueryRow(ctx, `SELECT count(*) FROM crawls WHERE id = $1`, name).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d crawl records (%v); want none", n, err)
	}
	if reqs := s.web.Audit().Requests(s.web.HostName(0)); len(reqs) != 0 {
		t.Errorf("%d requests for a refused crawl", len(reqs))
	}
}

// A crawl's time and byte budgets end it cleanly, with the reason in its progress: no request
// starts more than 5 s after its time is up, and it fetches at most 1 MB past its bytes.
func TestBudgetsEndACrawl(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.Pages, wc.Specials = 3, 400, false
	wc.DefaultDelay = 100 * time.Millisecond
	s := newStack(t, wc)
	seeds := []string{"http://" + s.web.HostName(0) + "/", "http://" + s.web.HostName(1) + "/", "http://" + s.web.HostName(2) + "/"}
	spec := crawl.Spec{Seeds: seeds, Scope: crawl.ScopeHost, Delay: crawl.Duration(wc.DefaultDelay), MaxPages: 5000,
		RequestTimeout: crawl.Duration(5 * time.Second), ProgressInterval: crawl.Duration(time.Second)}

	timed := spec
	timed.MaxDuration = crawl.Duration(8 * time.Second)
	began := time.Now()
	p := s.crawl(timed, 2*time.Minute)
	var last time.Time
	for h := range 3 {
		for _, r := range s.web.Audit().Requests(s.web.HostName(h)) {
			last = clock.Later(last, r.Start)
		}
	}
	t.Logf("time budget: %d pages, last request %s after the start, %+v", p.Pages, last.Sub(began).Round(time.Millisecond), p.StopReason)
	if p.State != crawl.CrawlStopped || p.StopReason != crawl.StopByDuration || p.Pages == 0 {
		t.Errorf("ended %q (%q) with %d pages; want stopped by its time budget, after some pages", p.State, p.StopReason, p.Pages)
	}
	if over := last.Sub(began.Add(timed.MaxDuration.D())); over > 5*time.Second {
		t.Errorf("a request started %s after the time budget ran out; want within 5 s", over)
	}

	sized := spec
	sized.Name, sized.MaxBytes = testenv.Unique("bytes"), 200_000
	p = s.crawl(sized, 2*time.Minute)
	t.Logf("byte budget: %d pages, %d bytes", p.Pages, p.Bytes)
	if p.State != crawl.CrawlStopped || p.StopReason != crawl.StopByBytes || p.Bytes < sized.MaxBytes {
		t.Errorf("ended %q (%q) at %d bytes; want stopped by its byte budget of %d", p.State, p.StopReason, p.Bytes, sized.MaxBytes)
	}
	if p.Bytes > sized.MaxBytes+1<<20 {
		t.Errorf("fetched %d bytes, over 1 MB past the budget of %d", p.Bytes, sized.MaxBytes)
	}
}
