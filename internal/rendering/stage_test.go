package rendering

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/admit"
	"github.com/trawlerdev/trawler/internal/clock"
	"github.com/trawlerdev/trawler/internal/config"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/fetch"
	"github.com/trawlerdev/trawler/internal/netguard"
	"github.com/trawlerdev/trawler/internal/pacing"
	"github.com/trawlerdev/trawler/internal/policy"
	"github.com/trawlerdev/trawler/internal/render"
	"github.com/trawlerdev/trawler/internal/store"
	"github.com/trawlerdev/trawler/internal/urlnorm"
)

// fakeStore is the render stage's store in memory: a crawl's render queue, the host's
// robots.txt and Crawl-delay, and its booked time.
type fakeStore struct {
	mu        sync.Mutex
	jobs      []store.RenderJob
	finished  map[string]store.RenderOutcome // URL → outcome
	released  []string
	robots    *store.Robots
	delay     time.Duration // the host's Crawl-delay
	next      time.Time     // the host's next free start
	gaps      []time.Duration
	crawl     crawl.CrawlState
	deferred  time.Time
	unbooked  int // slots given back
	claimSize []int
}

func (s *fakeStore) Clock() clock.Clock { return clock.Clock{} }

func (s *fakeStore) ClaimRenders(_ context.Context, _, _ string, limit int, _ time.Duration) ([]store.RenderJob, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.claimSize = append(s.claimSize, limit)
	n := min(limit, len(s.jobs))
	got := slices.Clone(s.jobs[:n])
	s.jobs = s.jobs[n:]
	return got, nil
}

func (s *fakeStore) FinishRender(_ context.Context, j store.RenderJob, _ string, o store.RenderOutcome) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.finished[j.URL] = o
	return nil
}

func (s *fakeStore) ReleaseRender(_ context.Context, j store.RenderJob, _ string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.released = append(s.released, j.URL)
	return nil
}

func (s *fakeStore) HostRobots(context.Context, string, string) (*store.Robots, error) {
	return s.robots, nil
}

func (s *fakeStore) HostCrawlDelay(context.Context, string) (time.Duration, error) {
	return s.delay, nil
}

func (s *fakeStore) BookRenderSlot(_ context.Context, _, _ string, gap time.Duration, _ netip.Addr, _ time.Duration, latest time.Time) (pacing.RenderSlot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.crawl != crawl.CrawlRunning {
		return pacing.RenderSlot{CrawlState: s.crawl}, nil
	}
	start := clock.Later(time.Now(), s.next)
	if start.After(latest) {
		return pacing.RenderSlot{CrawlState: s.crawl}, nil
	}
	s.next = start.Add(gap)
	s.gaps = append(s.gaps, gap)
	return pacing.RenderSlot{Start: start, Booked: true, CrawlState: s.crawl}, nil
}

func (s *fakeStore) ReleaseRenderSlot(context.Context, pacing.RenderSlot) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unbooked++
	return nil
}

func (s *fakeStore) DeferHost(_ context.Context, _ string, until time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deferred = until
	return nil
}

func (s *fakeStore) BookSlot(context.Context, string, time.Duration, netip.Addr, time.Duration, time.Time, *pacing.URLKey) (pacing.Slot, error) {
	panic("a render books render slots only")
}

func (s *fakeStore) BookWindow(context.Context, string, time.Duration, int, time.Time, time.Time, []pacing.URLKey, uint64) (pacing.Window, error) {
	panic("a render books render slots only")
}

func (s *fakeStore) SettleWindow(context.Context, string, time.Time, time.Time) error {
	panic("a render books render slots only")
}

func (s *fakeStore) PushSlot(context.Context, string, time.Time, netip.Addr, time.Time) error {
	panic("a render books render slots only")
}

// fakeBrowser asks the policy for each of its requests in turn, and gives back a DOM with the
// links it was told to (or err).
type fakeBrowser struct {
	mu       sync.Mutex
	requests []string            // asked for on every page (a path is made absolute on the page's host)
	answers  map[string][]string // page → "URL: block reason or status" for each request
	dom      string
	navs     []string
	err      func(page string) error
}

func (b *fakeBrowser) Concurrency() int { return 2 }

func (b *fakeBrowser) Render(ctx context.Context, pageURL string, policy render.Policy) (*render.Result, error) {
	if b.err != nil {
		if err := b.err(pageURL); err != nil {
			return nil, err
		}
	}
	res := &render.Result{DOM: b.dom, Navigations: b.navs, Blocked: map[string]int{}}
	for _, r := range append([]string{pageURL}, b.requests...) {
		a := policy(ctx, render.Request{URL: r, Method: "GET"})
		res.Requests++
		got := a.Block
		if got == "" {
			got = http.StatusText(a.Status)
			if a.Status == 0 && len(a.Body) > 0 {
				got = "capture"
			}
			res.Answered++
		} else {
			res.Blocked[a.Block]++
		}
		b.mu.Lock()
		b.answers[pageURL] = append(b.answers[pageURL], r+": "+got)
		b.mu.Unlock()
	}
	return res, nil
}

type fixture struct {
	st       *fakeStore
	browser  *fakeBrowser
	stage    *Stage
	doms     []string
	admitted []string
	hits     []string // paths the site was asked for
	mu       sync.Mutex
}

const page = "http://site.test/page"

func newFixture(t *testing.T, site http.HandlerFunc) *fixture {
	t.Helper()
	f := &fixture{
		st:      &fakeStore{finished: map[string]store.RenderOutcome{}, crawl: crawl.CrawlRunning},
		browser: &fakeBrowser{answers: map[string][]string{}, dom: `<html><body><a href="/next">n</a><a href="http://away.test/">a</a></body></html>`},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.hits = append(f.hits, r.URL.Path)
		f.mu.Unlock()
		site(w, r)
	}))
	t.Cleanup(srv.Close)
	dialer := netguard.New(netguard.Options{ConnectTo: []config.ConnectRule{{Pattern: "site.test", Address: srv.Listener.Addr().String()}}})
	crawls := &policy.Crawls{Norm: urlnorm.New(urlnorm.Default()), DefaultUserAgent: "TrawlerBot/1.0"}
	crawls.Put("c", crawl.Spec{Name: "c", Seeds: []string{"http://site.test/"}, Scope: crawl.ScopeDomain,
		Delay: crawl.Duration(100 * time.Millisecond)}.WithDefaults())
	f.stage = &Stage{Store: f.st, Hosts: f.st, Schedule: &pacing.Schedule{Store: f.st}, Browser: f.browser, Crawls: crawls, Client: fetch.New(fetch.Options{Dialer: dialer}),
		Admit: func(_ context.Context, _ *policy.Crawl, d *admit.Discovery) (admit.AdmitStats, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			for _, c := range d.Cands {
				f.admitted = append(f.admitted, c.URL)
			}
			return admit.AdmitStats{New: len(d.Cands)}, nil
		},
		Body: func(context.Context, string, int64) ([]byte, error) { return []byte("<html>the capture</html>"), nil },
		StoreDOM: func(_ context.Context, _ string, dom []byte) (string, func(context.Context) error, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.doms = append(f.doms, string(dom))
			return "dom/" + string(rune('0'+len(f.doms))), nil, nil
		}}
	return f
}

func (f *fixture) queue(urls ...string) {
	for _, u := range urls {
		f.st.jobs = append(f.st.jobs, store.RenderJob{CrawlID: "c", Hash: []byte(u), URL: u, Host: "site.test",
			BodyKey: "body/" + u, ContentType: "text/html"})
	}
}

func (f *fixture) run(t *testing.T) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := f.stage.Render(ctx, Run{CrawlID: "c", Owner: "r1", For: time.Second})
	if err != nil {
		t.Fatalf("render run: %v", err)
	}
	return res
}

func allowAll() *store.Robots {
	return &store.Robots{Status: 200, Body: "User-agent: *\nDisallow: /private\n"}
}

// A render run renders the pages it claims (as many at once as the browser renders), stores
// each DOM, admits the DOM's links and the page's attempted navigations through the one
// admission path, and finishes each page with what it did.
func TestARunRendersStoresAndAdmits(t *testing.T) {
	f := newFixture(t, func(w http.ResponseWriter, r *http.Request) {})
	f.st.robots = allowAll()
	f.browser.navs = []string{"http://site.test/went"}
	f.queue(page, "http://site.test/other")
	var beats int
	f.stage.Hooks.Beat = func(Result) { beats++ }
	res := f.run(t)

	if res.Rendered != 2 || res.Failed != 0 || len(f.doms) != 2 {
		t.Fatalf("result %+v, %d DOMs stored; want 2 rendered, 2 stored", res, len(f.doms))
	}
	if f.st.claimSize[0] != 2 {
		t.Errorf("claimed %d pages at a time; want the browser's concurrency, 2", f.st.claimSize[0])
	}
	slices.Sort(f.admitted)
	want := []string{"http://site.test/next", "http://site.test/next", "http://site.test/went", "http://site.test/went"}
	if !slices.Equal(f.admitted, want) {
		t.Errorf("admitted %v; want %v (each page's links and navigations in scope)", f.admitted, want)
	}
	o := f.st.finished[page]
	if o.DOMKey == "" || o.Err != "" || o.Links == 0 || o.Requests != 1 {
		t.Errorf("page finished as %+v; want its DOM stored, its links and its one request counted", o)
	}
	if beats == 0 {
		t.Errorf("no heartbeat")
	}
}

// The page's own document comes from its capture, never the network; a subresource of its own
// host and scheme that robots.txt allows is fetched on a booked slot a delay apart (the
// larger of the crawl's delay and the host's Crawl-delay); everything else is blocked and
// never requested.
func TestThePolicyKeepsThePageToItsHostPaced(t *testing.T) {
	f := newFixture(t, func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("body{}")) })
	f.st.robots = allowAll()
	f.st.delay = 250 * time.Millisecond
	f.browser.requests = []string{"http://site.test/a.css", "http://site.test/b.js", "http://other.test/x.js",
		"https://site.test/c.css", "http://site.test/private/d.js", "data:text/plain,hi"}
	f.queue(page)
	f.run(t)

	got := f.browser.answers[page]
	want := []string{page + ": capture", "http://site.test/a.css: OK", "http://site.test/b.js: OK",
		"http://other.test/x.js: third party", "https://site.test/c.css: other scheme",
		"http://site.test/private/d.js: robots.txt", "data:text/plain,hi: scheme data"}
	if !slices.Equal(got, want) {
		t.Fatalf("answers %q;\nwant %q", got, want)
	}
	if !slices.Equal(f.hits, []string{"/a.css", "/b.js"}) {
		t.Errorf("the site was asked for %v; want only the two allowed subresources", f.hits)
	}
	for _, g := range f.st.gaps {
		if g < 250*time.Millisecond {
			t.Errorf("a slot booked %s apart; the host's Crawl-delay is 250ms", g)
		}
	}
}

// Without a cached robots.txt nothing of the host is fetched (unknown rules allow nothing); a
// 429 defers the host for every booking and stops the page's other requests; a crawl no longer
// running books no slot.
func TestThePolicyStops(t *testing.T) {
	t.Run("no robots.txt", func(t *testing.T) {
		f := newFixture(t, func(http.ResponseWriter, *http.Request) {})
		f.browser.requests = []string{"http://site.test/a.css"}
		f.queue(page)
		f.run(t)
		if len(f.hits) != 0 || f.browser.answers[page][1] != "http://site.test/a.css: robots.txt" {
			t.Errorf("answers %q, site asked %v; want a.css blocked by (unknown) robots.txt", f.browser.answers[page], f.hits)
		}
	})
	t.Run("429", func(t *testing.T) {
		f := newFixture(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "60")
			w.WriteHeader(http.StatusTooManyRequests)
		})
		f.st.robots = allowAll()
		f.browser.requests = []string{"http://site.test/a.css", "http://site.test/b.css"}
		f.queue(page)
		before := time.Now()
		f.run(t)
		if !slices.Equal(f.hits, []string{"/a.css"}) {
			t.Errorf("the site was asked for %v after a 429; want a.css only", f.hits)
		}
		if f.st.deferred.Before(before.Add(50 * time.Second)) {
			t.Errorf("host deferred until %s; want its Retry-After (60 s)", f.st.deferred)
		}
		if got := f.browser.answers[page][2]; got != "http://site.test/b.css: host answered HTTP 429" {
			t.Errorf("b.css: %q; want blocked after the 429", got)
		}
	})
	t.Run("paused crawl", func(t *testing.T) {
		f := newFixture(t, func(http.ResponseWriter, *http.Request) {})
		f.st.robots, f.st.crawl = allowAll(), crawl.CrawlPaused
		f.browser.requests = []string{"http://site.test/a.css"}
		f.queue(page)
		f.run(t)
		if len(f.hits) != 0 || f.browser.answers[page][1] != "http://site.test/a.css: crawl paused" {
			t.Errorf("answers %q, site asked %v; want a.css blocked, the crawl paused", f.browser.answers[page], f.hits)
		}
	})
}

// A page the browser cannot render is recorded as failed (tried again later); a browser that
// dies gives its pages back uncounted, and a run whose browser dies more than
// maxBrowserRestarts times fails: the worker is what is broken.
func TestFailedRendersAndADyingBrowser(t *testing.T) {
	f := newFixture(t, func(http.ResponseWriter, *http.Request) {})
	f.browser.err = func(p string) error {
		if p == page {
			return errors.New("navigation timeout")
		}
		return nil
	}
	f.queue(page, "http://site.test/fine")
	res := f.run(t)
	if res.Failed != 1 || res.Rendered != 1 || f.st.finished[page].Err != "navigation timeout" {
		t.Errorf("result %+v, page finished %+v; want one failed with its error, one rendered", res, f.st.finished[page])
	}

	f = newFixture(t, func(http.ResponseWriter, *http.Request) {})
	f.browser.err = func(string) error { return render.ErrBrowserGone }
	for i := range 2 * (maxBrowserRestarts + 1) {
		f.queue("http://site.test/p" + string(rune('0'+i)))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := f.stage.Render(ctx, Run{CrawlID: "c", Owner: "r1", For: 10 * time.Second})
	if err == nil || res.BrowserRestarts != maxBrowserRestarts+1 {
		t.Errorf("run ended with %v after %d restarts; want a failure after %d", err, res.BrowserRestarts, maxBrowserRestarts+1)
	}
	if len(f.st.released) != 2*(maxBrowserRestarts+1) || len(f.st.finished) != 0 {
		t.Errorf("%d pages given back, %d finished; want every page given back, none finished", len(f.st.released), len(f.st.finished))
	}
}
