package fetching

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/admit"
	"github.com/trawlerdev/trawler/internal/clock"
	"github.com/trawlerdev/trawler/internal/config"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/fetch"
	"github.com/trawlerdev/trawler/internal/metrics"
	"github.com/trawlerdev/trawler/internal/netguard"
	"github.com/trawlerdev/trawler/internal/pacing"
	"github.com/trawlerdev/trawler/internal/policy"
	"github.com/trawlerdev/trawler/internal/store"
	"github.com/trawlerdev/trawler/internal/urlnorm"
)

// fakeStore is the fetch stage's store in memory: one host's queue of due URLs, its booked
// time (one schedule, as the hosts row keeps it), the outcomes recorded and the robots.txt
// cached. It keeps what the lease's correctness rests on: claims, bookings a gap apart, and
// URL states.
type fakeStore struct {
	mu       sync.Mutex
	queue    []crawl.Claimed           // due, unclaimed
	states   map[string]crawl.URLState // URL → state
	claims   map[string][]string       // owner → URLs claimed
	next     map[string]time.Time      // each schedule's next free start, by the key it is booked on
	robots   map[string]*store.Robots
	outcomes []store.FetchOutcome
	deferred time.Time
	healthy  int
	failing  []string
	settled  int
	keys     []string // the schedules booked on, in order
	jars     map[string][]store.SetCookie
	payloads map[string]store.Payload // by digest, as stored
	asked    [][]string               // the crawls each FindPayload looked in
	awaiting int                      // the lease's pages awaiting processing, as HostDue tells them
	limits   []int                    // each ClaimAs's limit, in order
	lastDue  *time.Time               // what a ClaimAs of limit 0 tells as next due
}

func newFakeStore(urls ...string) *fakeStore {
	s := &fakeStore{states: map[string]crawl.URLState{}, claims: map[string][]string{}, robots: map[string]*store.Robots{}, next: map[string]time.Time{}}
	for _, u := range urls {
		s.queue = append(s.queue, crawl.Claimed{CrawlID: "c", Hash: []byte(u), URL: u})
		s.states[u] = crawl.URLQueued
	}
	return s
}

func (s *fakeStore) Clock() clock.Clock { return clock.Clock{} }

func (s *fakeStore) ClaimAs(_ context.Context, host, owner string, limit int, _ time.Duration, _ time.Time) ([]crawl.Claimed, *time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limits = append(s.limits, limit)
	if limit == 0 {
		return nil, s.lastDue, nil
	}
	return s.claimLocked(host, owner, limit), nil, nil
}

func (s *fakeStore) claimLocked(host, owner string, limit int) []crawl.Claimed {
	var got, rest []crawl.Claimed
	for _, u := range s.queue {
		if len(got) < limit && urlnorm.Authority(u.URL) == host {
			got = append(got, u)
		} else {
			rest = append(rest, u)
		}
	}
	s.queue = rest
	for _, u := range got {
		s.states[u.URL] = crawl.URLClaimed
		s.claims[owner] = append(s.claims[owner], u.URL)
	}
	return got
}

// ClaimInLease is a quiet claim (it leaves the host waiting only when nothing is left to wait
// for, which this store does not model): it is not counted in limits.
func (s *fakeStore) ClaimInLease(_ context.Context, host, owner string, _ []string, limit int, _ time.Duration, _ time.Time, _ time.Duration) (store.LeaseClaim, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	res := store.LeaseClaim{URLs: s.claimLocked(host, owner, limit)}
	if len(res.URLs) == 0 {
		res.Awaiting = s.awaiting
	}
	return res, nil
}

func (s *fakeStore) Release(_ context.Context, claims []crawl.Claimed) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, u := range claims {
		if s.states[u.URL] == crawl.URLClaimed {
			s.states[u.URL] = crawl.URLQueued
			s.queue = append(s.queue, u)
		}
	}
	return nil
}

func (s *fakeStore) HostDue(context.Context, string, []string) (*time.Time, int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return nil, s.awaiting, nil
}

// book takes n gaps of key's time from earliest or its next free start, whichever is later.
func (s *fakeStore) book(key string, earliest time.Time, gap time.Duration, n int) time.Time {
	start := clock.Later(time.Now(), clock.Later(earliest, s.next[key]))
	s.next[key] = start.Add(time.Duration(n) * gap)
	s.keys = append(s.keys, key)
	return start
}

func (s *fakeStore) BookSlot(_ context.Context, host string, gap time.Duration, _ netip.Addr, _ time.Duration, earliest time.Time, url *pacing.URLKey) (pacing.Slot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	slot := pacing.Slot{Start: s.book(host, earliest, gap, 1)}
	if url != nil {
		slot.URLState, slot.CrawlState = s.states[string(url.Hash)], crawl.CrawlRunning
	}
	return slot, nil
}

func (s *fakeStore) BookWindow(_ context.Context, host string, gap time.Duration, n int, earliest, own time.Time, urls []pacing.URLKey, epoch uint64) (pacing.Window, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n = max(n, 1)
	continues := !own.IsZero() && own.Equal(s.next[host])
	if continues {
		s.next[host] = time.Time{} // the caller's own window: it goes on from earliest
	}
	start := s.book(host, earliest, gap, n)
	return pacing.Window{Start: start, End: s.next[host], Mark: s.next[host], Continues: continues, States: s.statesLocked(urls, epoch)}, nil
}

func (s *fakeStore) statesLocked(urls []pacing.URLKey, epoch uint64) map[string]pacing.WindowState {
	out := map[string]pacing.WindowState{}
	for _, u := range urls {
		out[pacing.WindowKey(u)] = pacing.WindowState{URL: s.states[string(u.Hash)], Crawl: crawl.CrawlRunning, At: time.Now(), Epoch: epoch}
	}
	return out
}

func (s *fakeStore) WindowStates(_ context.Context, urls []pacing.URLKey, epoch uint64) (map[string]pacing.WindowState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.statesLocked(urls, epoch), nil
}

func (s *fakeStore) SettleWindow(_ context.Context, host string, end, next time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settled++
	if s.next[host].Equal(end) {
		s.next[host] = next
	} else {
		s.next[host] = clock.Later(s.next[host], next)
	}
	return nil
}

func (s *fakeStore) PushSlot(_ context.Context, host string, hostNext time.Time, _ netip.Addr, _ time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next[host] = clock.Later(s.next[host], hostNext)
	return nil
}

func (s *fakeStore) DeferHost(_ context.Context, _ string, until time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deferred = until
	return nil
}

func (s *fakeStore) BookRenderSlot(context.Context, string, string, time.Duration, netip.Addr, time.Duration, time.Time) (pacing.RenderSlot, error) {
	panic("a fetch lease books no render slot")
}

func (s *fakeStore) ReleaseRenderSlot(context.Context, pacing.RenderSlot) error {
	panic("a fetch lease books no render slot")
}

func (s *fakeStore) RecordFetch(_ context.Context, _ string, o store.FetchOutcome) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.outcomes = append(s.outcomes, o)
	s.states[o.URL] = o.State
	return true, nil
}

func (s *fakeStore) RecordFetchGrouped(ctx context.Context, host string, o store.FetchOutcome) (bool, error) {
	return s.RecordFetch(ctx, host, o)
}

func (s *fakeStore) HostRobotsAndHealth(_ context.Context, host, scheme string) (*store.Robots, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.robots[host+" "+scheme]; r != nil {
		return r, false, nil
	}
	return s.robots[scheme], false, nil // what a test cached for every host
}

func (s *fakeStore) SaveRobots(_ context.Context, host, scheme string, r store.Robots, _ time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.robots[host+" "+scheme] = &r
	return nil
}

func (s *fakeStore) StartSitemapDiscovery(context.Context, string, string) (bool, error) {
	return false, nil
}

func (s *fakeStore) HostFailing(_ context.Context, _, reason string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failing = append(s.failing, reason)
	return nil
}

func (s *fakeStore) HostHealthy(context.Context, string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.healthy++
	return nil
}

func (s *fakeStore) RetireIfDead(context.Context, string, time.Duration) (bool, error) {
	return false, nil
}

func (s *fakeStore) CookieJar(_ context.Context, crawlID, host string) ([]store.SetCookie, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.jars[crawlID+" "+host]), nil
}

func (s *fakeStore) FindPayload(_ context.Context, _ string, from []string, hash []byte) (store.Payload, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asked = append(s.asked, from)
	p, ok := s.payloads[string(hash)]
	return p, ok, nil
}

func (s *fakeStore) SaveCookies(_ context.Context, crawlID, host string, cookies []store.SetCookie) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.jars == nil {
		s.jars = map[string][]store.SetCookie{}
	}
	s.jars[crawlID+" "+host] = slices.Clone(cookies)
	return nil
}

// outcome is the outcome recorded for url (zero if none).
func (s *fakeStore) outcome(url string) (store.FetchOutcome, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var last store.FetchOutcome
	n := 0
	for _, o := range s.outcomes {
		if o.URL == url {
			last, n = o, n+1
		}
	}
	return last, n
}

// site is a test host served on loopback: it answers each path with handler and notes when
// each request arrived.
type site struct {
	mu       sync.Mutex
	arrivals []time.Time
	paths    []string
	hosts    []string // the Host each request named
	headers  []http.Header
	cookies  []string // the Cookie header of each request
}

func (w *site) seen() ([]string, []time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.paths), slices.Clone(w.arrivals)
}

// fixture is a fetch stage over a fake store for site.test, served by handler on loopback.
type fixture struct {
	st       *fakeStore
	stage    *Stage
	site     *site
	addr     string            // the site's address
	tune     func(*crawl.Spec) // the crawl's spec, as a test sets it
	bodies   map[string]string
	admitted []string
}

func newFixture(t *testing.T, handler http.HandlerFunc, urls ...string) *fixture {
	t.Helper()
	f := &fixture{st: newFakeStore(urls...), site: &site{}, bodies: map[string]string{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.site.mu.Lock()
		f.site.arrivals = append(f.site.arrivals, time.Now())
		f.site.paths = append(f.site.paths, r.URL.Path)
		f.site.hosts = append(f.site.hosts, r.Host)
		f.site.headers = append(f.site.headers, r.Header.Clone())
		f.site.cookies = append(f.site.cookies, r.Header.Get("Cookie"))
		f.site.mu.Unlock()
		handler(w, r)
	}))
	t.Cleanup(srv.Close)
	f.addr = srv.Listener.Addr().String()
	dialer := netguard.New(netguard.Options{ConnectTo: []config.ConnectRule{{Pattern: "site.test", Address: f.addr},
		{Pattern: "*.x.test", Address: f.addr}}})
	crawls := &policy.Crawls{Norm: urlnorm.New(urlnorm.Default()), DefaultUserAgent: "TrawlerBot/1.0"}
	crawls.Put("c", crawl.Spec{Name: "c", Seeds: []string{"http://site.test/"}, Scope: crawl.ScopeHost}.WithDefaults())
	var mu sync.Mutex
	f.stage = &Stage{Frontier: f.st, Fetches: f.st, Hosts: f.st, Payloads: f.st, Schedule: &pacing.Schedule{Store: f.st}, Client: fetch.New(fetch.Options{Dialer: dialer}), Crawls: crawls, Dialer: dialer,
		Admit: func(_ context.Context, _ *policy.Crawl, d *admit.Discovery) (admit.AdmitStats, error) {
			mu.Lock()
			defer mu.Unlock()
			for _, c := range d.Cands {
				f.admitted = append(f.admitted, c.URL)
			}
			return admit.AdmitStats{New: len(d.Cands)}, nil
		},
		StoreBody: func(_ context.Context, _ string, body []byte) (string, func(context.Context) error, error) {
			mu.Lock()
			defer mu.Unlock()
			key := "body/" + string(rune('a'+len(f.bodies)))
			f.bodies[key] = string(body)
			return key, nil, nil
		}}
	return f
}

// lease runs one lease of site.test with the given delay.
func (f *fixture) lease(t *testing.T, delay time.Duration, resumed LeaseBeat, attempt int) LeaseResult {
	t.Helper()
	// The crawl's spec paces the lease too (its delay is the floor): the test's delay.
	spec := crawl.Spec{Name: "c", Seeds: []string{"http://site.test/"}, Scope: crawl.ScopeHost, Delay: crawl.Duration(delay)}
	if f.tune != nil {
		f.tune(&spec)
	}
	f.stage.Crawls.Put("c", spec.WithDefaults())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := f.stage.Lease(ctx, LeaseInput{Host: "site.test", Delay: delay, MaxCrawlDelay: 2 * time.Second,
		Concurrency: 1, Chunk: 10, ClaimTTL: time.Minute, Owner: "lease-1", LeaseFor: 20 * time.Second}, resumed, attempt)
	if err != nil {
		t.Fatalf("lease: %v", err)
	}
	return res
}

func pages(n int) []string {
	var urls []string
	for i := range n {
		urls = append(urls, "http://site.test/p"+string(rune('0'+i)))
	}
	return urls
}

func page(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/robots.txt":
		http.NotFound(w, r)
	default:
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<html><title>" + r.URL.Path + "</title><p>words</p></html>"))
	}
}

// A lease asks for robots.txt first, then fetches every URL it claimed, each request start at
// least the delay after the one before as the server sees them; each outcome is recorded
// once, each body stored, and the lease ends dry with its host's time settled.
func TestALeaseFetchesItsChunkPacedByTheDelay(t *testing.T) {
	const delay = 150 * time.Millisecond
	f := newFixture(t, page, pages(4)...)
	res := f.lease(t, delay, LeaseBeat{}, 1)

	paths, arrivals := f.site.seen()
	if want := []string{"/robots.txt", "/p0", "/p1", "/p2", "/p3"}; !slices.Equal(paths, want) {
		t.Fatalf("requests %v; want %v", paths, want)
	}
	for i := 1; i < len(arrivals); i++ {
		if gap := arrivals[i].Sub(arrivals[i-1]); gap < delay {
			t.Errorf("request %d came %s after the one before; the delay is %s", i, gap, delay)
		}
	}
	for _, u := range pages(4) {
		o, n := f.st.outcome(u)
		if n != 1 || o.Status != 200 || o.State != crawl.URLFetched || f.bodies[o.BodyKey] == "" {
			t.Errorf("%s: %d outcomes, last status %d, state %q, body %q; want one 200, fetched (for processing), its body stored",
				u, n, o.Status, o.State, o.BodyKey)
		}
	}
	if res.Fetched != 4 || res.Requests != 5 || res.Errors != 0 || !res.Dry {
		t.Errorf("result %+v; want 4 fetched in 5 requests, no errors, dry", res)
	}
	if r := f.st.robots["site.test http"]; r == nil || r.Status != 404 {
		t.Errorf("robots.txt cached as %+v; want its 404", r)
	}
	if f.st.settled != 1 {
		t.Errorf("the host's window settled %d times; want once, at the end", f.st.settled)
	}
}

// A lease whose time runs out while it waits only for links its own pages may yield (they
// await processing) ends as a lease that ran dry does: its last look claims nothing and leaves
// the host waiting, so those links wake the host workflow when they come, and no other lease
// is run only to wait for them.
func TestALeaseOutOfTimeWaitingOnlyForItsPagesLinksEndsDry(t *testing.T) {
	f := newFixture(t, page, pages(2)...)
	f.st.awaiting = 2
	f.stage.Crawls.Put("c", crawl.Spec{Name: "c", Seeds: []string{"http://site.test/"}, Scope: crawl.ScopeHost,
		Delay: crawl.Duration(100 * time.Millisecond)}.WithDefaults())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := f.stage.Lease(ctx, LeaseInput{Host: "site.test", Delay: 100 * time.Millisecond, MaxCrawlDelay: 2 * time.Second,
		Concurrency: 1, Chunk: 10, ClaimTTL: time.Minute, Owner: "lease-1", LeaseFor: 1500 * time.Millisecond}, LeaseBeat{}, 1)
	if err != nil {
		t.Fatalf("lease: %v", err)
	}
	if res.Fetched != 2 || !res.Dry || res.NextDue != nil {
		t.Errorf("result %+v; want 2 fetched, dry with nothing due", res)
	}
	f.st.mu.Lock()
	if want := []int{10, 0}; !slices.Equal(f.st.limits, want) {
		t.Errorf("claims that leave the host waiting, by limit: %v; want %v (the first chunk's, then a last look claiming nothing)", f.st.limits, want)
	}
	f.st.mu.Unlock()

	// A URL found due by the last look (links admitted since the lease looked) ends the lease
	// as its time does, not dry: the next lease starts at once, not after a timer.
	f2 := newFixture(t, page, pages(2)...)
	f2.st.awaiting = 2
	f2.stage.Crawls.Put("c", crawl.Spec{Name: "c", Seeds: []string{"http://site.test/"}, Scope: crawl.ScopeHost,
		Delay: crawl.Duration(100 * time.Millisecond)}.WithDefaults())
	now := time.Now()
	f2.st.lastDue = &now
	res, err = f2.stage.Lease(ctx, LeaseInput{Host: "site.test", Delay: 100 * time.Millisecond, MaxCrawlDelay: 2 * time.Second,
		Concurrency: 1, Chunk: 10, ClaimTTL: time.Minute, Owner: "lease-2", LeaseFor: 1500 * time.Millisecond}, LeaseBeat{}, 1)
	f2.st.mu.Lock()
	looks := slices.Clone(f2.st.limits)
	f2.st.mu.Unlock()
	if err != nil || res.Fetched != 2 || res.Dry || !slices.Equal(looks, []int{10, 0}) {
		t.Errorf("with a URL due at the last look: %+v, %v, claims by limit %v; want 2 fetched, not dry, after a last look", res, err, looks)
	}
}

// robots.txt's rules are kept: a disallowed URL is skipped without a request, its reason
// recorded, and robots.txt's Crawl-delay (capped by MaxCrawlDelay) spaces the others.
func TestRobotsTxtSkipsAndPaces(t *testing.T) {
	f := newFixture(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			_, _ = w.Write([]byte("User-agent: *\nDisallow: /p1\nCrawl-delay: 0.4\n"))
			return
		}
		page(w, r)
	}, pages(3)...)
	res := f.lease(t, 10*time.Millisecond, LeaseBeat{}, 1)

	paths, arrivals := f.site.seen()
	if want := []string{"/robots.txt", "/p0", "/p2"}; !slices.Equal(paths, want) {
		t.Fatalf("requests %v; want %v (p1 is disallowed)", paths, want)
	}
	if o, _ := f.st.outcome("http://site.test/p1"); o.State != crawl.URLSkipped || !strings.HasPrefix(o.SkipReason, "robots.txt") {
		t.Errorf("p1: state %q, reason %q; want skipped by robots.txt", o.State, o.SkipReason)
	}
	if gap := arrivals[2].Sub(arrivals[1]); gap < 400*time.Millisecond {
		t.Errorf("p2 came %s after p0; robots.txt's Crawl-delay is 400ms", gap)
	}
	if res.CrawlDelay != 400*time.Millisecond || res.CrawlDelayCapped || res.Skipped != 1 {
		t.Errorf("result %+v; want Crawl-delay 400ms, not capped, one skipped", res)
	}
}

// A Retry-After stops the lease's requests: the host is deferred until then, and the URLs of
// the chunk not yet requested go back to the queue for after it, unrequested and with no
// attempt counted.
func TestRetryAfterDefersTheHostAndReleasesTheRest(t *testing.T) {
	f := newFixture(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/p1" {
			w.Header().Set("Retry-After", "120")
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		page(w, r)
	}, pages(4)...)
	before := time.Now()
	res := f.lease(t, 20*time.Millisecond, LeaseBeat{}, 1)

	paths, _ := f.site.seen()
	if want := []string{"/robots.txt", "/p0", "/p1"}; !slices.Equal(paths, want) {
		t.Fatalf("requests %v; want %v (nothing after the Retry-After)", paths, want)
	}
	if res.DeferUntil.Before(before.Add(110*time.Second)) || f.st.deferred.IsZero() {
		t.Errorf("deferred until %s (store: %s); want about 120 s from the start", res.DeferUntil, f.st.deferred)
	}
	for _, u := range []string{"http://site.test/p2", "http://site.test/p3"} {
		if o, _ := f.st.outcome(u); o.State != crawl.URLQueued || o.NextFetchAt.Before(res.DeferUntil) || o.Attempts != 0 || o.Status != 0 {
			t.Errorf("%s: state %q, next fetch %s, attempts %d, status %d; want queued for after %s, no attempt, no answer",
				u, o.State, o.NextFetchAt, o.Attempts, o.Status, res.DeferUntil)
		}
	}
	if o, _ := f.st.outcome("http://site.test/p1"); o.State != crawl.URLQueued || o.Status != 503 || !o.NextFetchAt.After(before.Add(110*time.Second)) {
		t.Errorf("p1: state %q, status %d, next fetch %s; want a 503 queued for after the Retry-After", o.State, o.Status, o.NextFetchAt)
	}
}

// A retried lease resumes where its last attempt was, from Postgres, not from its heartbeat:
// it takes back the URLs its predecessor held (ClaimAs), skips those it already fetched,
// goes on from the counts its last heartbeat gave, and waits a full delay before its first
// request (the dead attempt may have sent one after its last heartbeat).
func TestARetriedLeaseResumesWithoutRefetching(t *testing.T) {
	const delay = 200 * time.Millisecond
	f := newFixture(t, page, pages(3)[1:]...)   // held by the dead attempt: the retry's claim takes them back
	f.st.states[pages(3)[0]] = crawl.URLFetched // the dead attempt fetched it: no longer claimed
	f.st.robots["http"] = &store.Robots{Status: 404, FetchedAt: time.Now(), ExpiresAt: time.Now().Add(time.Hour)}
	resumed := LeaseBeat{LeaseResult: LeaseResult{LeaseView: LeaseView{Done: 1, Fetched: 1}, LeaseFindings: LeaseFindings{Requests: 1}}}
	began := time.Now()
	res := f.lease(t, delay, resumed, 2)

	paths, arrivals := f.site.seen()
	if want := []string{"/p1", "/p2"}; !slices.Equal(paths, want) {
		t.Fatalf("requests %v; want %v (p0 was finished, robots.txt cached)", paths, want)
	}
	if wait := arrivals[0].Sub(began); wait < delay {
		t.Errorf("the retry's first request left %s after it began; want a full delay (%s)", wait, delay)
	}
	if res.Fetched != 3 || res.Done != 3 {
		t.Errorf("result %+v; want 3 fetched and done, counting the attempt before", res)
	}
}

// A redirect is not followed in the lease: its target goes through the one admission path, and
// the URL is done with its status and target recorded.
func TestARedirectTargetIsAdmittedNotFollowed(t *testing.T) {
	f := newFixture(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/p0" {
			http.Redirect(w, r, "/moved/here", http.StatusMovedPermanently)
			return
		}
		page(w, r)
	}, pages(1)...)
	f.lease(t, 10*time.Millisecond, LeaseBeat{}, 1)

	paths, _ := f.site.seen()
	if slices.Contains(paths, "/moved/here") {
		t.Errorf("requests %v: the lease followed the redirect itself", paths)
	}
	if !slices.Equal(f.admitted, []string{"http://site.test/moved/here"}) {
		t.Errorf("admitted %v; want the redirect target", f.admitted)
	}
	if o, _ := f.st.outcome("http://site.test/p0"); o.Status != 301 || o.State != crawl.URLDone {
		t.Errorf("p0: status %d, state %q; want 301, done", o.Status, o.State)
	}
}

// A host whose every address is forbidden (here loopback, with no connect-to rule or allowed
// network naming it) is not asked anything, not even robots.txt: each URL is skipped as a
// blocked address.
func TestARefusedHostIsNotRequested(t *testing.T) {
	f := newFixture(t, page)
	u := "http://" + f.addr + "/a"
	f.st.queue = []crawl.Claimed{{CrawlID: "c", Hash: []byte(u), URL: u}}
	f.stage.Dialer = netguard.New(netguard.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := f.stage.Lease(ctx, LeaseInput{Host: f.addr, Delay: time.Millisecond, Chunk: 5, ClaimTTL: time.Minute,
		Owner: "l", LeaseFor: 5 * time.Second}, LeaseBeat{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if paths, _ := f.site.seen(); len(paths) != 0 {
		t.Errorf("requests %v to a refused host", paths)
	}
	if o, n := f.st.outcome(u); n != 1 || o.State != crawl.URLSkipped || o.SkipReason != "blocked address" {
		t.Errorf("%s: %d outcomes, last state %q, reason %q; want one, skipped as a blocked address", u, n, o.State, o.SkipReason)
	}
	if res.Skipped != 1 || res.Requests != 0 {
		t.Errorf("result %+v; want one skipped, no request", res)
	}
}

// The spec's headers go with every request of the crawl, robots.txt's included, beside
// Trawler's own; an Accept among them replaces Trawler's.
func TestTheSpecsHeadersAreSent(t *testing.T) {
	f := newFixture(t, page, pages(1)...)
	f.tune = func(s *crawl.Spec) {
		s.Headers = map[string]string{"Accept-Language": "de", "x-api-key": "k1", "Accept": "text/html"}
	}
	f.lease(t, 10*time.Millisecond, LeaseBeat{}, 1)

	f.site.mu.Lock()
	defer f.site.mu.Unlock()
	if len(f.site.headers) != 2 {
		t.Fatalf("%d requests; want robots.txt and p0", len(f.site.headers))
	}
	for i, h := range f.site.headers {
		if h.Get("Accept-Language") != "de" || h.Get("X-Api-Key") != "k1" || h.Get("Accept") != "text/html" ||
			h.Get("User-Agent") != "TrawlerBot/1.0" || h.Get("Accept-Encoding") == "" {
			t.Errorf("request %d (%s) carried %v; want the spec's headers and Trawler's User-Agent and Accept-Encoding", i, f.site.paths[i], h)
		}
	}
}

// With autoThrottle, a host whose answers slow down is asked less often: its gaps grow with
// its response time (k × the recent one) and shrink again as it recovers, never below the
// configured delay.
func TestAutoThrottleFollowsTheResponseTime(t *testing.T) {
	const delay = 30 * time.Millisecond
	slow := map[string]bool{"/p4": true, "/p5": true, "/p6": true, "/p7": true}
	urls := pages(10)
	for i := 10; i < 14; i++ {
		urls = append(urls, "http://site.test/q"+string(rune('0'+i-10)))
	}
	f := newFixture(t, func(w http.ResponseWriter, r *http.Request) {
		if slow[r.URL.Path] {
			time.Sleep(300 * time.Millisecond)
		} else {
			time.Sleep(10 * time.Millisecond)
		}
		page(w, r)
	}, urls...)
	f.tune = func(s *crawl.Spec) { s.AutoThrottle = 2 }
	res := f.lease(t, delay, LeaseBeat{}, 1)

	paths, arrivals := f.site.seen()
	if len(paths) != 15 {
		t.Fatalf("requests %v", paths)
	}
	gap := func(i int) time.Duration { return arrivals[i].Sub(arrivals[i-1]) }
	var before, peak time.Duration
	for i := 2; i <= 5; i++ { // p1..p4 came after fast answers
		before = max(before, gap(i))
	}
	for i := 6; i <= 10; i++ {
		peak = max(peak, gap(i))
	}
	last := gap(len(arrivals) - 1)
	t.Logf("gaps: before %s, peak %s, last %s; auto delay at the end %s", before, peak, last, res.AutoDelay)
	if peak < 3*before || peak < 500*time.Millisecond {
		t.Errorf("the gap grew to %s under 300 ms answers (before: %s); want k × the response time on top", peak, before)
	}
	if last > peak/2 {
		t.Errorf("the gap was still %s after the host recovered (peak %s); want it to shrink", last, peak)
	}
	for i := 1; i < len(arrivals); i++ {
		if gap(i) < delay {
			t.Errorf("gap %d: %s, below the configured delay %s", i, gap(i), delay)
		}
	}
	if res.AutoDelay <= 0 || res.AutoDelay > 2*time.Second {
		t.Errorf("auto delay %s reported; want a positive one within the cap", res.AutoDelay)
	}
}

// On a host the crawl's robotsOverride names, robots.txt is neither requested nor obeyed: a
// path it disallows is fetched, still paced by the delay, and every such request is counted.
func TestRobotsOverrideSetsRobotsTxtAsideStillPaced(t *testing.T) {
	const delay = 100 * time.Millisecond
	f := newFixture(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			_, _ = w.Write([]byte("User-agent: *\nDisallow: /\n"))
			return
		}
		page(w, r)
	}, pages(3)...)
	f.tune = func(s *crawl.Spec) { s.RobotsOverride = []string{"site.test"} }
	counted := map[string]int64{}
	f.stage.Hooks.Count = func(name string, n int64, _ ...string) { counted[name] += n }
	res := f.lease(t, delay, LeaseBeat{}, 1)

	paths, arrivals := f.site.seen()
	if want := []string{"/p0", "/p1", "/p2"}; !slices.Equal(paths, want) {
		t.Fatalf("requests %v; want %v (no robots.txt, nothing skipped)", paths, want)
	}
	for i := 1; i < len(arrivals); i++ {
		if gap := arrivals[i].Sub(arrivals[i-1]); gap < delay {
			t.Errorf("request %d came %s after the one before; the delay is %s", i, gap, delay)
		}
	}
	if res.Fetched != 3 || counted[metrics.RobotsOverridden] != 3 || counted[metrics.RobotsBlocked] != 0 {
		t.Errorf("fetched %d, counted %v; want 3 fetched, 3 counted as overridden", res.Fetched, counted)
	}
}

// With politenessKey "domain", two subdomains of one registrable domain keep one schedule:
// their leases, running at once, never start requests closer than the delay, whichever host
// they are for. With the default key each host has its own schedule, and theirs overlap.
func TestDomainKeyedPolitenessSharesOneGap(t *testing.T) {
	const delay = 200 * time.Millisecond
	run := func(key string) (*fixture, []time.Time) {
		var urls []string
		for _, h := range []string{"a.x.test", "b.x.test"} {
			for i := range 3 {
				urls = append(urls, "http://"+h+"/p"+string(rune('0'+i)))
			}
		}
		f := newFixture(t, page, urls...)
		f.stage.Crawls.Put("c", crawl.Spec{Name: "c", Seeds: []string{"http://a.x.test/"}, Delay: crawl.Duration(delay),
			PolitenessKey: key}.WithDefaults())
		var wg sync.WaitGroup
		for _, h := range []string{"a.x.test", "b.x.test"} {
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				if _, err := f.stage.Lease(ctx, LeaseInput{Host: h, Delay: delay, MaxCrawlDelay: time.Second, Concurrency: 1,
					Chunk: 10, ClaimTTL: time.Minute, Owner: "lease-" + h, LeaseFor: 20 * time.Second}, LeaseBeat{}, 1); err != nil {
					t.Errorf("lease of %s: %v", h, err)
				}
			})
		}
		wg.Wait()
		_, arrivals := f.site.seen()
		slices.SortFunc(arrivals, func(a, b time.Time) int { return a.Compare(b) })
		return f, arrivals
	}
	minGap := func(arrivals []time.Time) time.Duration {
		m := time.Hour
		for i := 1; i < len(arrivals); i++ {
			m = min(m, arrivals[i].Sub(arrivals[i-1]))
		}
		return m
	}

	f, arrivals := run(crawl.PolitenessDomain)
	if len(arrivals) != 8 { // robots.txt and three pages on each host
		t.Fatalf("%d requests (%v on %v); want 8", len(arrivals), f.site.paths, f.site.hosts)
	}
	if g := minGap(arrivals); g < delay {
		t.Errorf("keyed by domain, two requests to x.test came %s apart; the delay is %s", g, delay)
	}
	for _, k := range f.st.keys {
		if k != "domain:x.test" {
			t.Errorf("booked on %q; want the domain's schedule", k)
		}
	}

	_, arrivals = run("")
	if g := minGap(arrivals); g >= delay {
		t.Errorf("keyed by host, the two hosts' requests were never closer than %s: the test cannot tell the keys apart", g)
	}
}

// With cookies on, a cookie one page sets is sent with the next — also by another worker's
// lease, which rebuilds the jar from the store — and expires when it says; never with cookies
// off.
func TestCookiesFollowTheHostAcrossLeases(t *testing.T) {
	site := func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/p0":
			http.SetCookie(w, &http.Cookie{Name: "session", Value: "s1", Path: "/"})
			http.SetCookie(w, &http.Cookie{Name: "brief", Value: "b", Path: "/", MaxAge: 1})
		case "/p1":
			http.SetCookie(w, &http.Cookie{Name: "page", Value: "2", Path: "/p2"})
		}
		page(w, r)
	}
	f := newFixture(t, site, pages(2)...)
	f.tune = func(s *crawl.Spec) { s.Cookies = true }
	f.lease(t, 10*time.Millisecond, LeaseBeat{}, 1)
	f.site.mu.Lock()
	got := slices.Clone(f.site.cookies)
	f.site.mu.Unlock()
	if want := []string{"", "", "session=s1; brief=b"}; !slices.Equal(got, want) {
		t.Errorf("Cookie headers %q; want %q (robots.txt, p0, p1)", got, want)
	}

	// Another worker: a new stage over the same store, its memory empty; "brief" has expired.
	time.Sleep(1100 * time.Millisecond)
	g := newFixture(t, site, "http://site.test/p2", "http://site.test/p3")
	g.st.jars, g.st.robots = f.st.jars, f.st.robots
	g.tune = f.tune
	g.lease(t, 10*time.Millisecond, LeaseBeat{}, 1)
	g.site.mu.Lock()
	got = slices.Clone(g.site.cookies)
	g.site.mu.Unlock()
	if want := []string{"page=2; session=s1", "session=s1"}; !slices.Equal(got, want) { // longer paths first (RFC 6265 §5.4)
		t.Errorf("the next worker sent %q; want %q (the jar rebuilt, brief expired, page only under /p2)", got, want)
	}

	off := newFixture(t, site, pages(2)...)
	off.lease(t, 10*time.Millisecond, LeaseBeat{}, 1)
	for _, c := range off.site.cookies {
		if c != "" {
			t.Errorf("with cookies off a request carried %q", c)
		}
	}
}
