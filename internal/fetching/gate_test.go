package fetching

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
)

// gateOf claims the fixture's URLs as a lease would and returns the lease and its gate.
func gateOf(t *testing.T, f *fixture, spec crawl.Spec) (*leaseRun, *gate) {
	t.Helper()
	f.stage.Crawls.Put("c", spec.WithDefaults())
	b := &leaseRun{f: f.stage, in: LeaseInput{Host: "site.test", Delay: 10 * time.Millisecond, MaxCrawlDelay: 2 * time.Second,
		Concurrency: 1, Chunk: 10, ClaimTTL: time.Minute, Owner: "lease-1", LeaseFor: 20 * time.Second},
		began: time.Now(), sem: make(chan struct{}, 1), errs: make(chan error, 1)}
	ctx := context.Background()
	if more, err := b.claimChunk(ctx, b.in.Owner); err != nil || !more {
		t.Fatalf("claim: %v %v", more, err)
	}
	if err := b.pace(ctx, b.urls); err != nil {
		t.Fatal(err)
	}
	return b, newGate(b)
}

func (f *fixture) robotsAsked() int {
	f.site.mu.Lock()
	defer f.site.mu.Unlock()
	n := 0
	for _, p := range f.site.paths {
		if p == "/robots.txt" {
			n++
		}
	}
	return n
}

// The gate asks for robots.txt once for a lease's URLs of one scheme and crawl, and its
// ticket turns a URL the rules forbid into a skip without booking the host's time; an allowed
// URL gets a slot and keeps its place among the requests in flight.
func TestTheGateAsksRobotsOnceAndSkipsWhatItForbids(t *testing.T) {
	f := newFixture(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			_, _ = w.Write([]byte("User-agent: *\nDisallow: /p1\n"))
			return
		}
		page(w, r)
	}, pages(3)...)
	b, g := gateOf(t, f, crawl.Spec{Name: "c", Seeds: []string{"http://site.test/"}, Scope: crawl.ScopeHost})
	ctx := context.Background()
	var passes []pass
	for i, u := range b.urls {
		p, err := g.check(ctx, i, u)
		if err != nil || p.decided != nil || !p.obeys {
			t.Fatalf("%s: %+v %v", u.URL, p, err)
		}
		passes = append(passes, p)
	}
	if n := f.robotsAsked(); n != 1 {
		t.Errorf("robots.txt asked %d times for one scheme and crawl, want 1", n)
	}
	booked := b.res.Requests
	forbidden := -1
	for i, u := range b.urls {
		if strings.HasSuffix(u.URL, "/p1") {
			forbidden = i
		}
	}
	tk, err := b.ticket(ctx, forbidden, b.urls[forbidden], passes[forbidden])
	if err != nil || tk.decided == nil || tk.decided.State != crawl.URLSkipped || tk.decided.SkipReason != "robots.txt" {
		t.Fatalf("forbidden URL's ticket %+v (%v), want a robots.txt skip", tk, err)
	}
	if b.res.Requests != booked || len(b.sem) != 0 {
		t.Errorf("a skip took a slot of the host (%d → %d) or kept its place (%d)", booked, b.res.Requests, len(b.sem))
	}
	allowed := (forbidden + 1) % len(b.urls)
	tk, err = b.ticket(ctx, allowed, b.urls[allowed], passes[allowed])
	if err != nil || tk.decided != nil || tk.start.IsZero() {
		t.Fatalf("allowed URL's ticket %+v (%v), want a slot", tk, err)
	}
	if len(b.sem) != 1 || b.res.Requests != booked+1 {
		t.Errorf("an allowed URL's ticket holds %d places and took %d slots", len(b.sem), b.res.Requests-booked)
	}
}

// A crawl whose robotsOverride names the host passes without robots.txt (nothing asked, all
// allowed, counted as not obeyed); a crawl naming a secret this worker cannot read is decided
// at the gate, a network error of the URL, and nothing is requested.
func TestTheGateWithoutRobotsTxtAndWithoutASecret(t *testing.T) {
	f := newFixture(t, page, pages(1)...)
	b, g := gateOf(t, f, crawl.Spec{Name: "c", Seeds: []string{"http://site.test/"}, Scope: crawl.ScopeHost,
		RobotsOverride: []string{"site.test"}})
	p, err := g.check(context.Background(), 0, b.urls[0])
	if err != nil || p.obeys || p.decided != nil || !p.rules.Allowed("/anything") {
		t.Fatalf("override: %+v %v", p, err)
	}
	if n := f.robotsAsked(); n != 0 {
		t.Errorf("robots.txt asked %d times under robotsOverride", n)
	}

	f = newFixture(t, page, pages(1)...)
	b, g = gateOf(t, f, crawl.Spec{Name: "c", Seeds: []string{"http://site.test/"}, Scope: crawl.ScopeHost,
		Headers: map[string]string{"Authorization": "secret:env:TRAWLER_TEST_UNSET_SECRET"}})
	p, err = g.check(context.Background(), 0, b.urls[0])
	if err != nil || p.decided == nil || p.decided.Err == "" || p.decided.Attempts != 1 {
		t.Fatalf("unreadable secret: %+v %v", p, err)
	}
	if n := len(f.site.paths); n != 0 {
		t.Errorf("%d requests sent for a crawl whose secret is unreadable", n)
	}
}

// A Retry-After that came in while the URL waited defers it at its ticket: queued for then,
// no slot booked.
func TestTheTicketDefersAfterARetryAfter(t *testing.T) {
	f := newFixture(t, page, pages(1)...)
	b, g := gateOf(t, f, crawl.Spec{Name: "c", Seeds: []string{"http://site.test/"}, Scope: crawl.ScopeHost})
	ctx := context.Background()
	p, err := g.check(ctx, 0, b.urls[0])
	if err != nil {
		t.Fatal(err)
	}
	until := time.Now().Add(time.Hour)
	b.res.DeferUntil = until
	booked := b.res.Requests
	tk, err := b.ticket(ctx, 0, b.urls[0], p)
	if err != nil || tk.decided == nil || tk.decided.State != crawl.URLQueued || !tk.decided.NextFetchAt.Equal(until) {
		t.Fatalf("ticket %+v (%v), want queued until the Retry-After", tk, err)
	}
	if b.res.Requests != booked || b.res.Deferred != 1 {
		t.Errorf("slots %d → %d, deferred %d", booked, b.res.Requests, b.res.Deferred)
	}
}
