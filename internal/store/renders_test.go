package store_test

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/admit"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/pacing"
	"github.com/trawlerdev/trawler/internal/store"
)

// queuedRender admits url, records a capture of it and queues its render.
func queuedRender(t *testing.T, s *store.Store, ctx context.Context, url string) store.Candidate {
	t.Helper()
	c := cand(url, "a.test", 1)
	if _, err := s.Frontier().Admit(ctx, "c", []store.Candidate{c}, admit.Budget(0), -1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Fetches().RecordFetch(ctx, "a.test", store.FetchOutcome{CrawlID: "c", Hash: c.Hash, URL: c.URL, FetchKey: c.URL,
		FetchedAt: time.Now(), Status: 200, BodyKey: "k", ContentType: "text/html", Bytes: 10, State: crawl.URLFetched}); err != nil {
		t.Fatal(err)
	}
	if err := s.Renders().QueueRenders(ctx, "c", [][]byte{c.Hash}); err != nil {
		t.Fatal(err)
	}
	return c
}

// A page whose worker dies while rendering it (its claim expires, never finished) is taken
// again only until its attempts are spent; then it is failed for good with the reason, so a
// poison page cannot keep its crawl from ending.
func TestPoisonRenderIsGivenUp(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	queuedRender(t, s, ctx, "http://a.test/poison")
	for i := 1; i <= 3; i++ {
		jobs, err := s.Renders().ClaimRenders(ctx, "c", "w", 5, 10*time.Millisecond)
		if err != nil || len(jobs) != 1 || jobs[0].Attempts != i {
			t.Fatalf("claim %d: %+v %v", i, jobs, err)
		}
		time.Sleep(50 * time.Millisecond) // the worker died: the claim expires unfinished
	}
	jobs, err := s.Renders().ClaimRenders(ctx, "c", "w", 5, time.Minute)
	if err != nil || len(jobs) != 0 {
		t.Fatalf("a poison page claimed a 4th time: %+v %v", jobs, err)
	}
	var state, why string
	if err := s.Pool().QueryRow(ctx, `SELECT state, coalesce(error, '') FROM renders WHERE crawl_id = 'c'`).Scan(&state, &why); err != nil {
		t.Fatal(err)
	}
	if state != "failed" || why == "" {
		t.Errorf("render %s (%q), want failed with its reason", state, why)
	}
}

// A render claimed by a run whose attempt died is taken by the next attempt or run at once,
// however long its hold (the crawl runs one render run at a time), and counts as an attempt.
func TestDeadRenderRunsClaimIsTakenBack(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	queuedRender(t, s, ctx, "http://a.test/page")
	if jobs, err := s.Renders().ClaimRenders(ctx, "c", "run/render/1#1", 5, time.Hour); err != nil || len(jobs) != 1 {
		t.Fatalf("claim: %+v %v", jobs, err)
	}
	if jobs, err := s.Renders().ClaimRenders(ctx, "c", "run/render/1#1", 5, time.Hour); err != nil || len(jobs) != 0 {
		t.Fatalf("the same attempt claimed its own render again: %+v %v", jobs, err)
	}
	jobs, err := s.Renders().ClaimRenders(ctx, "c", "run/render/1#2", 5, time.Hour)
	if err != nil || len(jobs) != 1 || jobs[0].Attempts != 2 {
		t.Fatalf("the retry takes the dead attempt's claim at once: %+v %v", jobs, err)
	}
}

// A render given back because the browser died is not counted as the page's attempt, a few
// times; a paused crawl's renders are not claimed until it runs again.
func TestRenderClaimsGivenBackAndPaused(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	queuedRender(t, s, ctx, "http://a.test/page")
	// Given back twice uncounted; then each browser death is one of the page's 3 attempts
	// (the page may be what kills it), and after them the page is given up.
	for i, want := range []int{1, 1, 1, 2, 3} {
		jobs, err := s.Renders().ClaimRenders(ctx, "c", "w", 5, time.Minute)
		if err != nil || len(jobs) != 1 || jobs[0].Attempts != want {
			t.Fatalf("claim %d after giving back: %+v %v, want attempt %d", i+1, jobs, err, want)
		}
		if err := s.Renders().ReleaseRender(ctx, jobs[0], "w"); err != nil {
			t.Fatal(err)
		}
	}
	if jobs, err := s.Renders().ClaimRenders(ctx, "c", "w", 5, time.Minute); err != nil || len(jobs) != 0 {
		t.Fatalf("a page whose browser died 5 times claimed again: %+v %v", jobs, err)
	}
	queuedRender(t, s, ctx, "http://a.test/page2")
	if err := s.Crawls().SetCrawlState(ctx, "c", crawl.CrawlPaused); err != nil {
		t.Fatal(err)
	}
	if jobs, err := s.Renders().ClaimRenders(ctx, "c", "w", 5, time.Minute); err != nil || len(jobs) != 0 {
		t.Fatalf("a paused crawl's render claimed: %+v %v", jobs, err)
	}
	if err := s.Crawls().SetCrawlState(ctx, "c", crawl.CrawlRunning); err != nil {
		t.Fatal(err)
	}
	if jobs, err := s.Renders().ClaimRenders(ctx, "c", "w", 5, time.Minute); err != nil || len(jobs) != 1 {
		t.Fatalf("the resumed crawl's render: %+v %v", jobs, err)
	}
}

// A rendering page books the host's starts only inside its deadline, however often it asks;
// a slot it did not use goes back; a paused crawl books nothing.
func TestRenderSlotsStayInsideThePagesDeadline(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	queuedRender(t, s, ctx, "http://a.test/page")
	gap := 300 * time.Millisecond
	deadline := time.Now().Add(time.Second)
	var last pacing.RenderSlot
	booked := 0
	for range 100 {
		slot, err := s.Schedule().BookRenderSlot(ctx, "a.test", "c", gap, netip.Addr{}, 0, deadline)
		if err != nil {
			t.Fatal(err)
		}
		if !slot.Booked {
			break
		}
		if slot.Start.After(deadline.Add(50 * time.Millisecond)) {
			t.Errorf("a slot at %s, past the deadline %s", slot.Start, deadline)
		}
		booked, last = booked+1, slot
	}
	if booked < 3 || booked > 5 {
		t.Errorf("%d slots booked in 1 s at a 300 ms gap", booked)
	}
	next := func() time.Time {
		var at time.Time
		if err := s.Pool().QueryRow(ctx, `SELECT next_request_at FROM hosts WHERE host = 'a.test'`).Scan(&at); err != nil {
			t.Fatal(err)
		}
		return at
	}
	before := next()
	if err := s.Schedule().ReleaseRenderSlot(ctx, last); err != nil {
		t.Fatal(err)
	}
	if d := before.Sub(next()); d != gap {
		t.Errorf("releasing the last slot moved the host's next start back by %s, want %s", d, gap)
	}
	if err := s.Crawls().SetCrawlState(ctx, "c", crawl.CrawlPaused); err != nil {
		t.Fatal(err)
	}
	slot, err := s.Schedule().BookRenderSlot(ctx, "a.test", "c", gap, netip.Addr{}, 0, time.Now().Add(time.Hour))
	if err != nil || slot.Booked || slot.CrawlState != crawl.CrawlPaused {
		t.Errorf("a paused crawl's page booked %+v %v", slot, err)
	}
	// A host that asked to slow down: no render slot until its Retry-After has passed.
	if err := s.Crawls().SetCrawlState(ctx, "c", crawl.CrawlRunning); err != nil {
		t.Fatal(err)
	}
	if err := s.Schedule().DeferHost(ctx, "a.test", time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if slot, err := s.Schedule().BookRenderSlot(ctx, "a.test", "c", gap, netip.Addr{}, 0, time.Now().Add(10*time.Second)); err != nil || slot.Booked {
		t.Errorf("a deferred host booked %+v %v", slot, err)
	}
}

// Render slots keep the per-IP gap too: two hosts on one address, each booked for a rendered
// page, start at least the address's gap apart, though each host's own gap is shorter.
func TestRenderSlotsKeepTheAddressGap(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	queuedRender(t, s, ctx, "http://a.test/page")
	ip := netip.MustParseAddr("192.0.2.7")
	var starts []time.Time
	for _, host := range []string{"a.test", "b.test", "a.test"} {
		slot, err := s.Schedule().BookRenderSlot(ctx, host, "c", 10*time.Millisecond, ip, 400*time.Millisecond, time.Now().Add(time.Minute))
		if err != nil || !slot.Booked {
			t.Fatalf("%s: %+v %v", host, slot, err)
		}
		starts = append(starts, slot.Start)
	}
	for i := 1; i < len(starts); i++ {
		if gap := starts[i].Sub(starts[i-1]); gap < 400*time.Millisecond-time.Millisecond {
			t.Errorf("slot %d started %v after the one before on the same address, want >= 400ms", i, gap)
		}
	}
	// Without an address, only the host's own gap holds.
	slot, err := s.Schedule().BookRenderSlot(ctx, "b.test", "c", 10*time.Millisecond, netip.Addr{}, 0, time.Now().Add(time.Minute))
	if err != nil || !slot.Booked || !slot.Start.Before(starts[2].Add(400*time.Millisecond)) {
		t.Errorf("b.test without an address: %+v %v", slot, err)
	}
}
