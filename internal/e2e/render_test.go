package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/config"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/render"
	"github.com/trawlerdev/trawler/internal/segment"
	"github.com/trawlerdev/trawler/internal/testenv"
	"github.com/trawlerdev/trawler/internal/testweb"
	"github.com/trawlerdev/trawler/internal/warc"
)

// newRenderStack is a stack whose workers also serve the render role, on a test web of one
// generic host and the script hosts (js.test, tracker.test, jsbad.test) 300 ms apart; tune
// sets the browser's budgets.
func newRenderStack(t *testing.T, tune func(*render.Options)) (*stack, testweb.Config) {
	t.Helper()
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.Pages, wc.Specials, wc.Scripts = 1, 3, false, true
	wc.DefaultDelay = 300 * time.Millisecond
	s := newStackWithoutWorkers(t, wc)
	cfg := *s.cfg
	cfg.Roles = append(append([]string(nil), cfg.Roles...), config.RoleRender)
	cfg.Render.Concurrency, cfg.Render.Settle, cfg.Render.MaxBytes = 1, 500*time.Millisecond, 4<<20
	tune(&cfg.Render)
	s.startWorkers(&cfg)
	return s, wc
}

// js.test's links exist only once its scripts run. Crawled without rendering, only its static
// link is found; crawled with render on for js.test, the render role (headless Chromium)
// runs the page's own script, which adds two links and fetches a third from the host, and
// the crawl fetches all three. While rendering, the page's subresources come from js.test on
// its schedule; its third-party script (tracker.test) is fetched only by the crawl, as the
// page's requisite on tracker.test's own schedule, never by the browser; the script robots.txt
// forbids is never requested; and the audit sees 0 violations either way. The rendered DOM is stored.
func TestRenderingFindsLinksOnlyScriptsMake(t *testing.T) {
	s, wc := newRenderStack(t, func(r *render.Options) { r.PageTimeout, r.MemoryMB = 20*time.Second, 256 })
	ctx := context.Background()
	base := crawl.Spec{Seeds: []string{"http://js.test/"}, Scope: crawl.ScopeHost, Delay: crawl.Duration(wc.DefaultDelay),
		ProgressInterval: crawl.Duration(time.Second)}

	plain := s.crawl(base, 2*time.Minute)
	urls := s.urlRows(plain.CrawlID, "http://js.test")
	if plain.State != "done" || !urls["/static"].hasDoc {
		t.Fatalf("crawl without rendering: %+v, urls %v", plain, urls)
	}
	for _, p := range testweb.JSLinks {
		if _, ok := urls[p]; ok {
			t.Errorf("%s found without rendering", p)
		}
	}

	rendered := base
	rendered.Render = &crawl.Render{Hosts: []string{"js.test"}}
	p := s.crawl(rendered, 3*time.Minute)
	if p.State != "done" || p.Pending != 0 {
		t.Fatalf("crawl with rendering ended %s with %d pending: %+v", p.State, p.Pending, p)
	}
	urls = s.urlRows(p.CrawlID, "http://js.test")
	for _, path := range append([]string{"/static"}, testweb.JSLinks...) {
		if !urls[path].hasDoc {
			t.Errorf("%s not fetched with rendering on: %+v", path, urls[path])
		}
	}
	var state, domKey string
	var requests, blocked, links int
	if err := s.store.Pool().QueryRow(ctx, `SELECT r.state, coalesce(r.dom_key, ''), coalesce(r.requests, 0), coalesce(r.blocked, 0), coalesce(r.links, 0)
		FROM renders r JOIN urls u USING (crawl_id, url_hash) WHERE r.crawl_id = $1 AND u.url = 'http://js.test/'`, p.CrawlID).Scan(&state, &domKey, &requests, &blocked, &links); err != nil {
		t.Fatal(err)
	}
	t.Logf("front page render: %s, %d requests, %d blocked, %d links", state, requests, blocked, links)
	if state != "done" || blocked < 2 || links < 4 {
		t.Errorf("render: %s, %d requests, %d blocked, %d links", state, requests, blocked, links)
	}
	dom, err := segment.NewReader(s.blob, 64<<20).Get(ctx, domKey, 1<<20)
	if err != nil || !strings.Contains(string(dom), `href="/js/3"`) {
		t.Errorf("the stored DOM lacks the fetched link: %v %.300q", err, dom)
	}
	// The third party's script is a requisite of the page: the crawl fetches it as a URL of
	// tracker.test, robots.txt first, once per crawl. The renderer never asks it for anything.
	scripts := 0
	for _, r := range s.web.Audit().Requests("tracker.test") {
		switch r.Path {
		case "/t.js":
			scripts++
		case "/robots.txt":
		default:
			t.Errorf("the third party was asked for %s", r.Path)
		}
	}
	if scripts > 2 {
		t.Errorf("the third party's script was fetched %d times in two crawls", scripts)
	}
	for _, h := range s.web.Audit().Report().Hosts {
		if h.Host == "js.test" && (h.Disallowed != 0 || h.GapViolations != 0 || h.PagesBeforeRobots != 0) {
			t.Errorf("js.test: %d forbidden requests, %d too close, %d before robots.txt", h.Disallowed, h.GapViolations, h.PagesBeforeRobots)
		}
	}
	checkNoPoliteness(t, s)

	// The WARC output holds the rendered DOM as a conversion record beside the raw capture,
	// referring to the capture's response record.
	checkWARC(t, s, p.CrawlID)
	files, err := s.store.Archive().WARCFiles(ctx, p.CrawlID)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range files {
		b, err := s.blob.Get(ctx, f.Name, 1<<30)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), filepath.Base(f.Name))
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, path)
	}
	responseID := map[string]string{}
	var conversions []testenv.WARCRecord
	requested := map[string]string{} // request records: URI → the response they go with
	loaded := map[string]testenv.WARCRecord{}
	for _, r := range testenv.ReadWARC(t, paths...) {
		switch r.Type {
		case warc.TypeResponse:
			responseID[r.URI] = r.ID
			if strings.Contains(r.File, "-dom-") {
				loaded[r.URI] = r
			}
		case warc.TypeRequest:
			requested[r.URI] = r.ID
		case warc.TypeConversion:
			conversions = append(conversions, r)
		}
	}
	// What the browser loaded through the worker is archived beside the DOM, as request and
	// response records the index names: the JSON only the page's script fetches above all.
	var index strings.Builder
	for _, f := range files {
		if b, err := s.blob.Get(ctx, f.CDXKey, 1<<20); err == nil {
			index.Write(b)
		}
	}
	for _, u := range []string{"http://js.test/app.js", "http://js.test/api/links.json"} {
		r, ok := loaded[u]
		switch {
		case !ok:
			t.Errorf("what the browser loaded, %s, is not in the WARC beside the DOM (loaded: %v)", u, keys(loaded))
		case r.Status != 200 || r.DigestOK == nil || !*r.DigestOK:
			t.Errorf("the load of %s: status %d, digest ok %v", u, r.Status, r.DigestOK)
		case requested[u] == "":
			t.Errorf("the load of %s has no request record", u)
		case !strings.Contains(index.String(), `"url":"`+u+`"`):
			t.Errorf("the index does not name the load of %s", u)
		}
	}
	found := false
	for _, c := range conversions {
		if c.URI == "http://js.test/" {
			found = true
			if c.RefersToID == "" || c.RefersToID != responseID[c.URI] {
				t.Errorf("the DOM's conversion record refers to %q, the capture is %q", c.RefersToID, responseID[c.URI])
			}
		}
	}
	if !found {
		t.Errorf("no conversion record for the rendered front page among %d", len(conversions))
	}
}
