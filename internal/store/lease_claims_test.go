package store_test

import (
	"net/netip"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/admit"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/pacing"
	"github.com/trawlerdev/trawler/internal/store"
)

// A lease's claim between chunks says what HostDue would when it finds nothing, and leaves the
// host waiting (an admission wakes it) only once nothing is
// due soon and no page of the lease awaits processing.
func TestClaimInLeaseEndsOnlyWhenNothingIsLeft(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	owners := []string{"lease-1", "lease-1/top-up"}
	if _, err := s.Frontier().Admit(ctx, "c", []store.Candidate{cand("http://a.test/1", "a.test", 1)}, admit.Budget(0), -1); err != nil {
		t.Fatal(err)
	}
	res, err := s.Frontier().ClaimInLease(ctx, "a.test", owners[1], owners, 10, time.Minute, time.Now(), 5*time.Second)
	if err != nil || len(res.URLs) != 1 || res.Waiting {
		t.Fatalf("claim: %+v %v", res, err)
	}
	c := res.URLs[0]
	changed := true
	if ok, err := s.Fetches().RecordFetch(ctx, "a.test", store.FetchOutcome{CrawlID: c.CrawlID, Hash: c.Hash, URL: c.URL, FetchKey: c.URL,
		FetchedAt: time.Now(), Status: 200, ContentType: "text/html", BodyKey: "bodies/x", ContentHash: []byte{1},
		State: crawl.URLFetched, Changed: &changed}); err != nil || !ok {
		t.Fatalf("record: %v %v", ok, err)
	}
	// Its page awaits processing: the lease waits for its links.
	res, err = s.Frontier().ClaimInLease(ctx, "a.test", owners[1], owners, 10, time.Minute, time.Now(), 5*time.Second)
	if err != nil || len(res.URLs) != 0 || res.Awaiting != 1 || res.Waiting || res.Next != nil {
		t.Fatalf("with a page awaiting processing: %+v %v", res, err)
	}
	if w, _ := s.Frontier().Admit(ctx, "c", []store.Candidate{cand("http://a.test/2", "a.test", 1)}, admit.Budget(0), -1); len(w.Wake) != 0 {
		t.Fatalf("a host whose lease goes on is woken: %+v", w)
	}
	if res, err = s.Frontier().ClaimInLease(ctx, "a.test", owners[1], owners, 10, time.Minute, time.Now(), 5*time.Second); err != nil || len(res.URLs) != 1 {
		t.Fatalf("the lease claims the new URL: %+v %v", res, err)
	}
	u := res.URLs[0] // answered 503: retried in 3 s
	if ok, err := s.Fetches().RecordFetch(ctx, "a.test", store.FetchOutcome{CrawlID: u.CrawlID, Hash: u.Hash, URL: u.URL, FetchKey: u.URL + "#1",
		FetchedAt: time.Now(), Status: 503, Err: "503", Attempts: 1, State: crawl.URLQueued, NextFetchAt: time.Now().Add(3 * time.Second)}); err != nil || !ok {
		t.Fatalf("record: %v %v", ok, err)
	}
	if err := s.Documents().MarkDone(ctx, c.CrawlID, c.Hash, "", ""); err != nil {
		t.Fatal(err)
	}
	// Nothing awaits, but a URL falls due within soon: the lease waits for it.
	res, err = s.Frontier().ClaimInLease(ctx, "a.test", owners[1], owners, 10, time.Minute, time.Now(), 5*time.Second)
	if err != nil || res.Waiting || res.Awaiting != 0 || res.Next == nil || time.Until(*res.Next) > 4*time.Second {
		t.Fatalf("with a URL due in 3 s: %+v %v", res, err)
	}
	// Nothing soon enough: the lease ends, and the next admission wakes the host.
	if res, err = s.Frontier().ClaimInLease(ctx, "a.test", owners[1], owners, 10, time.Minute, time.Now(), time.Millisecond); err != nil || !res.Waiting || res.Next == nil {
		t.Fatalf("nothing due soon: %+v %v", res, err)
	}
	if w, _ := s.Frontier().Admit(ctx, "c", []store.Candidate{cand("http://a.test/3", "a.test", 1)}, admit.Budget(0), -1); len(w.Wake) != 1 || w.Wake[0] != "a.test" {
		t.Fatalf("a host whose lease ended dry is not woken: %+v", w)
	}
}

// A lease whose time ran out while it waited for its pages' links ends with a last look that
// claims nothing (limit 0): it leaves the host waiting, so the next admission wakes the host,
// and tells when a URL that fell due meanwhile is due, leaving it queued for the next lease.
func TestALastLookClaimsNothingAndLeavesTheHostWaiting(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	if _, err := s.Frontier().Admit(ctx, "c", []store.Candidate{cand("http://a.test/1", "a.test", 1)}, admit.Budget(0), -1); err != nil {
		t.Fatal(err)
	}
	got, next, err := s.Frontier().ClaimAs(ctx, "a.test", "lease-1/chunks", 0, time.Minute, time.Now())
	if err != nil || len(got) != 0 || next == nil || time.Until(*next) > time.Second {
		t.Fatalf("last look: %d claimed, next %v, %v; want none claimed and the queued URL due now", len(got), next, err)
	}
	if w, _ := s.Frontier().Admit(ctx, "c", []store.Candidate{cand("http://a.test/2", "a.test", 1)}, admit.Budget(0), -1); len(w.Wake) != 1 || w.Wake[0] != "a.test" {
		t.Fatalf("after a last look the next admission does not wake the host: %+v", w)
	}
	if got, _, err = s.Frontier().ClaimAs(ctx, "a.test", "lease-2", 10, time.Minute, time.Now()); err != nil || len(got) != 2 {
		t.Fatalf("the next lease claims %d URLs (%v); want both, the first left queued by the last look", len(got), err)
	}
}

// Booking a slot for a URL reads its state and its crawl's in the same round trip.
func TestBookSlotReadsTheURLsState(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	a := cand("http://a.test/1", "a.test", 1)
	if _, err := s.Frontier().Admit(ctx, "c", []store.Candidate{a}, admit.Budget(0), -1); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Frontier().Claim(ctx, "a.test", 1, time.Minute, time.Now()); err != nil {
		t.Fatal(err)
	}
	slot, err := s.Schedule().BookSlot(ctx, "a.test", time.Second, netip.Addr{}, 0, time.Now(), &pacing.URLKey{CrawlID: "c", Hash: a.Hash})
	if err != nil || slot.URLState != crawl.URLClaimed || slot.CrawlState != "running" || slot.Start.IsZero() {
		t.Fatalf("slot %+v, %v", slot, err)
	}
	next, err := s.Schedule().BookSlot(ctx, "a.test", time.Second, netip.Addr{}, 0, time.Now(), nil)
	if err != nil || next.URLState != "" || next.Start.Sub(slot.Start) < time.Second-time.Millisecond {
		t.Fatalf("next slot %+v after %v, %v", next, slot.Start, err)
	}
}
