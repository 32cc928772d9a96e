package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/render"
)

// jsbad.test's pages attack the renderer through a real crawl. A fetch flood (10,000 fetches)
// makes a few requests, one at a time, each on its own booked start inside the page's deadline,
// and leaves the host's next start as after one page (it booked 10,000 slots before); dialogs
// are dismissed and an outerHTML bomb is not read, so the links those pages add after them are
// crawled; a page that sends its main frame away keeps its own DOM and gives where it went as
// a link. Then a crawl paused in the middle of a slow page's render: its requests stop. Last,
// a 429 with Retry-After to a render's request stops the page's requests and defers the host.
func TestHostilePagesCannotReachPastTheRenderer(t *testing.T) {
	s, wc := newRenderStack(t, func(r *render.Options) { r.PageTimeout, r.MemoryMB, r.MaxRequests = 12*time.Second, 512, 30 })
	ctx := context.Background()
	spec := crawl.Spec{Scope: crawl.ScopeHost, Delay: crawl.Duration(wc.DefaultDelay), ProgressInterval: crawl.Duration(time.Second),
		Render: &crawl.Render{Hosts: []string{"jsbad.test"}}}
	for _, p := range []string{"/flood", "/alert", "/bomb", "/away"} {
		spec.Seeds = append(spec.Seeds, "http://jsbad.test"+p)
	}
	p := s.crawl(spec, 4*time.Minute)
	if p.State != "done" || p.Pending != 0 {
		t.Fatalf("crawl ended %s with %d pending: %+v", p.State, p.Pending, p)
	}
	// The host's schedule after the flood: its next start no later than one gap from now.
	var ahead time.Duration
	if err := s.store.Pool().QueryRow(ctx, `SELECT coalesce(extract(epoch FROM next_request_at - clock_timestamp()), 0)::float8 * interval '1 second'
		FROM hosts WHERE host = 'jsbad.test'`).Scan(&ahead); err != nil {
		t.Fatal(err)
	}
	if ahead > 2*time.Second {
		t.Errorf("after the flood the host's next start is %s ahead", ahead)
	}
	flood := 0
	for _, r := range s.web.Audit().Requests("jsbad.test") {
		if strings.HasPrefix(r.Path, "/x?") {
			flood++
		}
	}
	// At most the page's deadline over the host's gap, and never past the request cap.
	if flood > 31 || flood < 1 {
		t.Errorf("the flood made %d requests to the host", flood)
	}
	urls := s.urlRows(p.CrawlID, "http://jsbad.test")
	for _, path := range []string{"/after-alert", "/after-bomb", "/elsewhere"} {
		if !urls[path].hasDoc {
			t.Errorf("%s, which a hostile page gives only once rendered, was not crawled: %+v", path, urls[path])
		}
	}
	rows, err := s.store.Pool().Query(ctx, `SELECT u.url, r.state, coalesce(r.error, '') FROM renders r JOIN urls u USING (crawl_id, url_hash)
		WHERE r.crawl_id = $1`, p.CrawlID)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var u, state, e string
		if err := rows.Scan(&u, &state, &e); err != nil {
			t.Fatal(err)
		}
		t.Logf("render %s: %s %s", u, state, e)
		if state != "done" {
			t.Errorf("render of %s: %s (%s)", u, state, e)
		}
	}
	rows.Close()
	checkNoPoliteness(t, s)

	// A crawl paused mid-render: the page's requests stop (the one in flight may finish).
	steps := func() int {
		n := 0
		for _, r := range s.web.Audit().Requests("jsbad.test") {
			if strings.HasPrefix(r.Path, "/step/") {
				n++
			}
		}
		return n
	}
	run := s.start(crawl.Spec{Seeds: []string{"http://jsbad.test/steps"}, Scope: crawl.ScopeHost, Delay: crawl.Duration(wc.DefaultDelay),
		ProgressInterval: crawl.Duration(time.Second), Render: &crawl.Render{Hosts: []string{"jsbad.test"}}})
	for deadline := time.Now().Add(90 * time.Second); steps() < 3; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			var state, e string
			var requests, blocked int
			_ = s.store.Pool().QueryRow(ctx, `SELECT r.state, coalesce(r.error, ''), coalesce(r.requests, 0), coalesce(r.blocked, 0)
				FROM renders r JOIN urls u USING (crawl_id, url_hash) WHERE u.url = 'http://jsbad.test/steps' ORDER BY r.created_at DESC LIMIT 1`).
				Scan(&state, &e, &requests, &blocked)
			t.Fatalf("the slow page made %d requests in 90 s; its render: %s %q, %d requests, %d blocked", steps(), state, e, requests, blocked)
		}
	}
	if err := s.tc.SignalWorkflow(ctx, run.GetID(), "", crawl.SignalPause, nil); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second) // the pause reaches Postgres; a request in flight ends
	atPause := steps()
	time.Sleep(4 * time.Second)
	if after := steps(); after != atPause {
		t.Errorf("while its crawl was paused the page made %d more requests", after-atPause)
	}
	if atPause >= 60 {
		t.Fatalf("the page finished before the pause (%d steps): the test proves nothing", atPause)
	}
	if err := s.tc.SignalWorkflow(ctx, run.GetID(), "", crawl.SignalResume, nil); err != nil {
		t.Fatal(err)
	}
	if p := s.wait(run, 3*time.Minute); p.State != "done" || p.Pending != 0 {
		t.Errorf("the paused crawl, resumed, ended %s with %d pending", p.State, p.Pending)
	}
	checkNoPoliteness(t, s)

	// A host that answers a render's request with 429 and Retry-After: the page requests
	// nothing more of it, and the host's every booking waits the Retry-After.
	p = s.crawl(crawl.Spec{Seeds: []string{"http://jsbad.test/slowdown"}, Scope: crawl.ScopeHost, Delay: crawl.Duration(wc.DefaultDelay),
		ProgressInterval: crawl.Duration(time.Second), Render: &crawl.Render{Hosts: []string{"jsbad.test"}}}, 3*time.Minute)
	if p.State != "done" || p.Pending != 0 {
		t.Fatalf("crawl ended %s with %d pending: %+v", p.State, p.Pending, p)
	}
	busy, after := 0, 0
	for _, r := range s.web.Audit().Requests("jsbad.test") {
		switch r.Path {
		case "/busy":
			busy++
		case "/after-busy":
			after++
		}
	}
	if busy != 1 || after != 0 {
		var state, e string
		var requests, blocked int
		_ = s.store.Pool().QueryRow(ctx, `SELECT state, coalesce(error, ''), coalesce(requests, 0), coalesce(blocked, 0) FROM renders WHERE crawl_id = $1`, p.CrawlID).
			Scan(&state, &e, &requests, &blocked)
		t.Logf("the render of /slowdown: %s %q, %d requests, %d blocked", state, e, requests, blocked)
		t.Errorf("after a 429: /busy requested %d times, /after-busy %d (want 1 and 0)", busy, after)
	}
	if err := s.store.Pool().QueryRow(ctx, `SELECT extract(epoch FROM next_request_at - clock_timestamp())::float8 * interval '1 second'
		FROM hosts WHERE host = 'jsbad.test'`).Scan(&ahead); err != nil {
		t.Fatal(err)
	}
	if ahead < 10*time.Second {
		t.Errorf("after a 429 with Retry-After: 20 the host's next start is only %s ahead", ahead)
	}
	checkNoPoliteness(t, s)
}
