package store_test

import (
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/store"
)

// A lease's processing sees its pages by claim owner and learns when the lease is over; a
// retried attempt of an ended lease learns it is over too.
func TestLeaseRowsAndPagesByOwner(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	a, b := cand("http://a.test/1", "a.test", 1), cand("http://a.test/2", "a.test", 1)
	if _, err := s.Admit(ctx, "c", []store.Candidate{a, b}); err != nil {
		t.Fatal(err)
	}
	owners := []string{"lease-1", "lease-1/top-up"}
	st, err := s.LeasePages(ctx, "lease-1", "a.test", owners)
	if err != nil || st.Exists || st.Done || len(st.Pages) != 0 {
		t.Fatalf("before the lease: %+v %v", st, err)
	}
	if done, err := s.OpenLease(ctx, "lease-1", "a.test"); err != nil || done {
		t.Fatalf("open: done %v, %v", done, err)
	}
	claimed, _, err := s.ClaimQuietly(ctx, "a.test", "lease-1/top-up", 10, time.Minute, time.Now())
	if err != nil || len(claimed) != 2 {
		t.Fatalf("claim: %v %v", claimed, err)
	}
	changed := true
	for i, c := range claimed {
		o := store.FetchOutcome{CrawlID: c.CrawlID, Hash: c.Hash, URL: c.URL, FetchKey: c.URL, FetchedAt: time.Now(), Status: 200,
			ContentType: "text/html", BodyKey: "bodies/x", ContentHash: []byte{byte(i)}, State: store.StateFetched, Changed: &changed}
		if i == 1 {
			o.State, o.BodyKey = store.StateDone, "" // not HTML: nothing to process
		}
		if ok, err := s.RecordFetch(ctx, "a.test", o); err != nil || !ok {
			t.Fatalf("record: %v %v", ok, err)
		}
	}
	if next, n, err := s.HostDue(ctx, "a.test", owners); err != nil || n != 1 || next != nil {
		t.Fatalf("due %v, awaiting %d, %v: want nothing queued and one page awaiting processing", next, n, err)
	}
	st, err = s.LeasePages(ctx, "lease-1", "a.test", owners)
	if err != nil || !st.Exists || st.Done || len(st.Pages) != 1 || st.Pages[0].Changed == nil || !*st.Pages[0].Changed {
		t.Fatalf("during the lease: %+v %v", st, err)
	}
	if err := s.EndLease(ctx, "lease-1", "a.test"); err != nil {
		t.Fatal(err)
	}
	if done, err := s.OpenLease(ctx, "lease-1", "a.test"); err != nil || !done {
		t.Fatalf("a retry of an ended lease: done %v, %v", done, err)
	}
	if st, err = s.LeasePages(ctx, "lease-1", "a.test", owners); err != nil || !st.Done || len(st.Pages) != 1 {
		t.Fatalf("after the lease: %+v %v", st, err)
	}
	if err := s.DropLease(ctx, "lease-1"); err != nil {
		t.Fatal(err)
	}
	if st.Backlog {
		t.Error("a host with nothing due has a backlog")
	}
	// A host with BacklogDepth URLs due has a deep queue: its lease's processing may take
	// bigger batches.
	var deep []store.Candidate
	for i := 0; i < store.BacklogDepth; i++ {
		deep = append(deep, cand(fmt.Sprintf("http://b.test/%d", i), "b.test", 1))
	}
	if _, err := s.Admit(ctx, "c", deep); err != nil {
		t.Fatal(err)
	}
	if st, err := s.LeasePages(ctx, "lease-2", "b.test", []string{"lease-2"}); err != nil || !st.Backlog {
		t.Errorf("a host with %d URLs due: %+v %v", store.BacklogDepth, st, err)
	}
}

// A lease's claim between chunks says what HostDue would when it finds nothing, and, asked to
// end the lease when dry, leaves the host waiting (an admission wakes it) only once nothing is
// due soon and no page of the lease awaits processing.
func TestClaimInLeaseEndsOnlyWhenNothingIsLeft(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	owners := []string{"lease-1", "lease-1/top-up"}
	if _, err := s.Admit(ctx, "c", []store.Candidate{cand("http://a.test/1", "a.test", 1)}); err != nil {
		t.Fatal(err)
	}
	res, err := s.ClaimInLease(ctx, "a.test", owners[1], owners, 10, time.Minute, time.Now(), 5*time.Second, true)
	if err != nil || len(res.URLs) != 1 || res.Waiting {
		t.Fatalf("claim: %+v %v", res, err)
	}
	c := res.URLs[0]
	changed := true
	if ok, err := s.RecordFetch(ctx, "a.test", store.FetchOutcome{CrawlID: c.CrawlID, Hash: c.Hash, URL: c.URL, FetchKey: c.URL,
		FetchedAt: time.Now(), Status: 200, ContentType: "text/html", BodyKey: "bodies/x", ContentHash: []byte{1},
		State: store.StateFetched, Changed: &changed}); err != nil || !ok {
		t.Fatalf("record: %v %v", ok, err)
	}
	// Its page awaits processing: the lease waits for its links.
	res, err = s.ClaimInLease(ctx, "a.test", owners[1], owners, 10, time.Minute, time.Now(), 5*time.Second, true)
	if err != nil || len(res.URLs) != 0 || res.Awaiting != 1 || res.Waiting || res.Next != nil {
		t.Fatalf("with a page awaiting processing: %+v %v", res, err)
	}
	if w, _ := s.Admit(ctx, "c", []store.Candidate{cand("http://a.test/2", "a.test", 1)}); len(w.Wake) != 0 {
		t.Fatalf("a host whose lease goes on is woken: %+v", w)
	}
	if res, err = s.ClaimInLease(ctx, "a.test", owners[1], owners, 10, time.Minute, time.Now(), 5*time.Second, true); err != nil || len(res.URLs) != 1 {
		t.Fatalf("the lease claims the new URL: %+v %v", res, err)
	}
	u := res.URLs[0] // answered 503: retried in 3 s
	if ok, err := s.RecordFetch(ctx, "a.test", store.FetchOutcome{CrawlID: u.CrawlID, Hash: u.Hash, URL: u.URL, FetchKey: u.URL + "#1",
		FetchedAt: time.Now(), Status: 503, Err: "503", Attempts: 1, State: store.StateQueued, NextFetchAt: time.Now().Add(3 * time.Second)}); err != nil || !ok {
		t.Fatalf("record: %v %v", ok, err)
	}
	if err := s.MarkDone(ctx, c.CrawlID, c.Hash, ""); err != nil {
		t.Fatal(err)
	}
	// Nothing awaits, but a URL falls due within soon: the lease waits for it.
	res, err = s.ClaimInLease(ctx, "a.test", owners[1], owners, 10, time.Minute, time.Now(), 5*time.Second, true)
	if err != nil || res.Waiting || res.Awaiting != 0 || res.Next == nil || time.Until(*res.Next) > 4*time.Second {
		t.Fatalf("with a URL due in 3 s: %+v %v", res, err)
	}
	// Not asked to end: never waiting, however dry.
	if res, err = s.ClaimInLease(ctx, "a.test", owners[1], owners, 10, time.Minute, time.Now(), time.Millisecond, false); err != nil || res.Waiting {
		t.Fatalf("a claim not asked to end: %+v %v", res, err)
	}
	// Nothing soon enough: the lease ends, and the next admission wakes the host.
	if res, err = s.ClaimInLease(ctx, "a.test", owners[1], owners, 10, time.Minute, time.Now(), time.Millisecond, true); err != nil || !res.Waiting || res.Next == nil {
		t.Fatalf("nothing due soon: %+v %v", res, err)
	}
	if w, _ := s.Admit(ctx, "c", []store.Candidate{cand("http://a.test/3", "a.test", 1)}); len(w.Wake) != 1 || w.Wake[0] != "a.test" {
		t.Fatalf("a host whose lease ended dry is not woken: %+v", w)
	}
}

// Booking a slot for a URL reads its state and its crawl's in the same round trip.
func TestBookSlotForReadsTheURLsState(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	a := cand("http://a.test/1", "a.test", 1)
	if _, err := s.Admit(ctx, "c", []store.Candidate{a}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Claim(ctx, "a.test", 1, time.Minute, time.Now()); err != nil {
		t.Fatal(err)
	}
	slot, err := s.BookSlotFor(ctx, "a.test", time.Second, netip.Addr{}, 0, time.Now(), &store.URLKey{CrawlID: "c", Hash: a.Hash})
	if err != nil || slot.URLState != store.StateClaimed || slot.CrawlState != "running" || slot.Start.IsZero() {
		t.Fatalf("slot %+v, %v", slot, err)
	}
	next, err := s.BookSlotFor(ctx, "a.test", time.Second, netip.Addr{}, 0, time.Now(), nil)
	if err != nil || next.URLState != "" || next.Start.Sub(slot.Start) < time.Second-time.Millisecond {
		t.Fatalf("next slot %+v after %v, %v", next, slot.Start, err)
	}
}
