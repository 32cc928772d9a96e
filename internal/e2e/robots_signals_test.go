package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/api"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/testweb"
)

// Every robots signal of signals.test is honoured, over http:// and https://:
//   - robots.txt per scheme (RFC 9309 §2.3): each scheme's file is fetched before that scheme's
//     pages, and a path one scheme's file forbids is fetched over the other;
//   - X-Robots-Tag (plain, comma lists, several headers, scoped to our token or another's) and
//     meta robots (name="robots", our product token, another crawler's): noindex pages keep no
//     text, nofollow pages' links are never requested, signals for others change nothing;
//   - the API says which signal kept each URL, or its text or links, out.
func TestRobotsSignalsPerSchemeHeaderAndMeta(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.Pages, wc.Specials, wc.Signals = 1, 3, false, true
	wc.DefaultDelay = 100 * time.Millisecond
	s := newStack(t, wc)
	p := s.crawl(crawl.Spec{Seeds: []string{"http://signals.test/"}, Scope: crawl.ScopeAny, Delay: crawl.Duration(wc.DefaultDelay),
		ProgressInterval: crawl.Duration(time.Second)}, 3*time.Minute)
	if p.State != "done" || p.Pending != 0 {
		t.Fatalf("crawl ended %s with %d pending: %+v", p.State, p.Pending, p)
	}
	ctx := context.Background()
	urls := s.urlRows(p.CrawlID, "")
	// robots.txt per scheme.
	for scheme, path := range testweb.SignalsBlocked {
		other := map[string]string{"http": "https", "https": "http"}[scheme]
		if r := urls[scheme+"://signals.test"+path]; r.state != crawl.URLSkipped || !strings.HasPrefix(r.skip, "robots.txt") {
			t.Errorf("%s://signals.test%s: %s %q, want skipped by robots.txt", scheme, path, r.state, r.skip)
		}
		if r := urls[other+"://signals.test"+path]; !r.hasDoc {
			t.Errorf("%s://signals.test%s (forbidden over %s only): %s %q, want fetched and stored", other, path, scheme, r.state, r.skip)
		}
	}
	var schemes []string
	if err := s.store.Pool().QueryRow(ctx, `SELECT array_agg(scheme ORDER BY scheme) FROM robots WHERE host = 'signals.test'`).Scan(&schemes); err != nil ||
		strings.Join(schemes, ",") != "http,https" {
		t.Errorf("robots.txt cached for %v (%v), want http and https", schemes, err)
	}

	// Page-level signals, over both schemes.
	for _, c := range testweb.SignalsCases(wc.ProductToken) {
		for _, scheme := range []string{"http", "https"} {
			page, next := scheme+"://signals.test"+c.Path, scheme+"://signals.test"+c.Next()
			r, ok := urls[page]
			if !ok || !r.hasDoc {
				t.Errorf("%s: not stored (%+v)", page, r)
				continue
			}
			if r.noindex != c.NoIndex || (r.textKey == "") != c.NoIndex {
				t.Errorf("%s: noindex %v, text %q; want noindex %v (signal %q)", page, r.noindex, r.textKey, c.NoIndex, r.signal)
			}
			if _, admitted := urls[next]; admitted == c.NoFollow {
				t.Errorf("%s: its link %s admitted %v, want %v (signal %q)", page, next, admitted, !c.NoFollow, r.signal)
			}
			if (r.signal == "") == (c.NoIndex || c.NoFollow) {
				t.Errorf("%s: signal %q", page, r.signal)
			}
		}
	}
	for _, req := range s.web.Audit().Requests("signals.test") {
		if strings.HasPrefix(req.Path, "/only/") {
			t.Errorf("requested %s, linked only from a nofollow page", req.Path)
		}
	}
	for _, h := range s.web.Audit().Report().Hosts {
		if h.Host == "signals.test" && (h.Disallowed != 0 || h.PagesBeforeRobots != 0 || h.RobotsRequests != 2) {
			t.Errorf("signals.test: %d requests its robots.txt forbids, %d before robots.txt, %d robots.txt requests (want one a scheme)",
				h.Disallowed, h.PagesBeforeRobots, h.RobotsRequests)
		}
	}
	checkNoPoliteness(t, s)

	// The API says which signal kept what out.
	srv := httptest.NewServer((&api.Server{Store: s.store, Temporal: s.tc, IDPrefix: s.cfg.IDPrefix, Norm: s.cfg.Normalizer(), UserAgent: s.cfg.UserAgent}).Handler())
	defer srv.Close()
	get := func(path string, v any) {
		t.Helper()
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %v", path, resp.StatusCode, err)
		}
	}
	for u, want := range map[string]string{
		"http://signals.test" + testweb.SignalsBlocked["http"]: "robots.txt",
		"https://signals.test/xrt/none":                        "x-robots-tag",
		"http://signals.test/meta/token":                       "meta",
		"http://signals.test/xrt/other-bot":                    "",
	} {
		var a api.URLAnalysis
		get("/api/v1/url?url="+url.QueryEscape(u), &a)
		if len(a.Crawls) != 1 || a.Crawls[0].KeptOutBy != want {
			t.Errorf("API on %s: %+v, want kept out by %q", u, a.Crawls, want)
		}
	}
	var a api.URLAnalysis
	get("/api/v1/url?url="+url.QueryEscape("https://signals.test/plain-blocked/a"), &a)
	if a.Robots == nil || !a.Robots.Allowed {
		t.Errorf("API: https's robots.txt allows /plain-blocked/a, it said %+v", a.Robots)
	}
	var h api.HostAnalysis
	get("/api/v1/host?host=signals.test", &h)
	if h.HostRecord == nil || h.KeptOut["robots.txt"] != 2 || h.KeptOut["x-robots-tag nofollow"] < 2 || h.KeptOut["meta noindex"] != 4 ||
		len(h.Robots) != 2 {
		t.Errorf("API host record: kept out %v, robots %+v", h.KeptOut, h.Robots)
	}
}
