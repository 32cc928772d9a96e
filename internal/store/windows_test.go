package store_test

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/admit"
	"github.com/trawlerdev/trawler/internal/clock"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/pacing"
	"github.com/trawlerdev/trawler/internal/store"
)

// A lease books a window of its host's time for several requests in one round trip, with
// their URLs' states; it extends its own window from where it is, while anyone else's
// booking starts after the window, and its own next window after theirs. What a lease did
// not use goes back.
func TestBookWindowKeepsOthersOutAndExtendsItsOwn(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	a, b := cand("http://a.test/1", "a.test", 1), cand("http://a.test/2", "a.test", 1)
	if _, err := s.Frontier().Admit(ctx, "c", []store.Candidate{a, b}, admit.Budget(0), -1); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Frontier().Claim(ctx, "a.test", 1, time.Minute, time.Now()); err != nil {
		t.Fatal(err)
	}
	const gap = 200 * time.Millisecond
	ka, kb := pacing.URLKey{CrawlID: "c", Hash: a.Hash}, pacing.URLKey{CrawlID: "c", Hash: b.Hash}
	missing := pacing.URLKey{CrawlID: "c", Hash: []byte("no such URL")}
	w, err := s.Schedule().BookWindow(ctx, "a.test", gap, 3, time.Now(), time.Time{}, []pacing.URLKey{ka, kb, missing}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := w.End.Sub(w.Start); got != 3*gap {
		t.Fatalf("window %v long, want 3 gaps", got)
	}
	claimed := map[crawl.URLState]bool{crawl.URLClaimed: true}
	if st := w.States[pacing.WindowKey(ka)]; st.Crawl != "running" || st.URL == "" {
		t.Errorf("state of a: %+v", st)
	}
	if sa, sb := w.States[pacing.WindowKey(ka)], w.States[pacing.WindowKey(kb)]; claimed[sa.URL] == claimed[sb.URL] {
		t.Errorf("one of the two was claimed, states %+v %+v", sa, sb)
	}
	if st, ok := w.States[pacing.WindowKey(missing)]; !ok || st.URL != "" || st.Crawl != "running" {
		t.Errorf("state of a URL not in the frontier: %+v %v", st, ok)
	}
	// Its own window continues from now, not after its end.
	own, err := s.Schedule().BookWindow(ctx, "a.test", gap, 2, time.Now(), w.Mark, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !own.Start.Before(w.End) || own.End.Sub(own.Start) != 2*gap {
		t.Errorf("extension %v–%v of the window %v–%v", own.Start, own.End, w.Start, w.End)
	}
	// Anyone else starts at its end.
	other, err := bookSlot(s, ctx, "a.test", gap, netip.Addr{}, 0, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if other.Before(own.End) {
		t.Errorf("another booking at %v, inside the window ending %v", other, own.End)
	}
	// The lease's next window, with someone else's booking since, starts after it.
	again, err := s.Schedule().BookWindow(ctx, "a.test", gap, 1, time.Now(), own.Mark, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if again.Start.Before(other.Add(gap)) {
		t.Errorf("window at %v, less than a gap after another booking at %v", again.Start, other)
	}
	// An unused window goes back to a delay after the last request; a stale give-back does
	// not move anyone's booking earlier.
	if err := s.Schedule().SettleWindow(ctx, "a.test", own.Mark, own.Start.Add(gap)); err != nil {
		t.Fatal(err)
	}
	if next, err := bookSlot(s, ctx, "a.test", gap, netip.Addr{}, 0, time.Time{}); err != nil || next.Before(again.End) {
		t.Errorf("a stale give-back moved the schedule: next %v, window ended %v, %v", next, again.End, err)
	}
	w2, err := s.Schedule().BookWindow(ctx, "b.test", gap, 5, time.Now(), time.Time{}, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	back := w2.Start.Add(gap)
	if err := s.Schedule().SettleWindow(ctx, "b.test", w2.Mark, back); err != nil {
		t.Fatal(err)
	}
	if next, err := bookSlot(s, ctx, "b.test", gap, netip.Addr{}, 0, time.Time{}); err != nil || !next.Before(w2.End) || next.Before(back) {
		t.Errorf("after the give-back to %v the next slot is %v (the window ended %v), %v", back, next, w2.End, err)
	}
	// A last answer that came late keeps the next booking a delay from it, past the window.
	w3, err := s.Schedule().BookWindow(ctx, "c.test", gap, 2, time.Now(), time.Time{}, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	late := w3.End.Add(300 * time.Millisecond)
	if err := s.Schedule().SettleWindow(ctx, "c.test", w3.Mark, late); err != nil {
		t.Fatal(err)
	}
	if next, err := bookSlot(s, ctx, "c.test", gap, netip.Addr{}, 0, time.Time{}); err != nil || next.Before(late.Add(-time.Microsecond)) {
		t.Errorf("after a late answer settled to %v the next slot is %v, %v", late, next, err)
	}
}

// A control (pause, a new deny list) tells the watch at commit; admissions, which update the
// crawl's row too, do not.
func TestControlWatchHearsControlsOnly(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := listening(t, s, wctx)
	deadline := time.Now().Add(10 * time.Second)
	e, _ := w.Epoch()
	if _, err := s.Frontier().Admit(ctx, "c", []store.Candidate{cand("http://a.test/1", "a.test", 1)}, admit.Budget(0), -1); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if !w.Fresh(e) {
		t.Fatal("an admission counted as a control")
	}
	if err := s.Crawls().SetCrawlState(ctx, "c", crawl.CrawlPaused); err != nil {
		t.Fatal(err)
	}
	for w.Fresh(e) {
		if time.Now().After(deadline) {
			t.Fatal("a pause did not reach the watch")
		}
		time.Sleep(10 * time.Millisecond)
	}
	e, _ = w.Epoch()
	if _, err := s.Crawls().Block(ctx, "c", []string{"b.test"}, nil); err != nil {
		t.Fatal(err)
	}
	for w.Fresh(e) {
		if time.Now().After(deadline) {
			t.Fatal("a block did not reach the watch")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	for _, live := w.Epoch(); live; _, live = w.Epoch() {
		if time.Now().After(deadline.Add(5 * time.Second)) {
			t.Fatal("the watch still listens after its context ended")
		}
		time.Sleep(10 * time.Millisecond)
	}
	var nilWatch *store.ControlWatch
	if e, live := nilWatch.Epoch(); live || nilWatch.Fresh(e) {
		t.Error("no watch calls what was read fresh")
	}
}

// Two workers whose clocks run 2 s ahead and 2 s behind the database's keep one host's
// spacing: each books the host's time, waits for it on its own clock and settles its window,
// in turns. Times stored by each are converted to the database's clock, so the requests, as
// the machine's clock sees them, stay a gap apart. Without the conversion the worker ahead
// starts its request as soon as the one behind has settled.
func TestSkewedWorkerClocksKeepOneSchedule(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	ahead := store.NewOnClock(s.Pool(), clock.Clock{Skew: 2 * time.Second})
	behind := store.NewOnClock(s.Pool(), clock.Clock{Skew: -2 * time.Second})
	const gap = 250 * time.Millisecond
	var starts []time.Time // on the machine's clock
	for _, w := range []*store.Store{behind, ahead, behind, ahead, ahead, behind} {
		c := w.Clock()
		win, err := w.Schedule().BookWindow(ctx, "skew.test", gap, 1, c.Now(), time.Time{}, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(c.Until(win.Start))
		starts = append(starts, time.Now())
		if err := w.Schedule().SettleWindow(ctx, "skew.test", win.Mark, c.Now().Add(gap)); err != nil {
			t.Fatal(err)
		}
	}
	for i := 1; i < len(starts); i++ {
		if d := starts[i].Sub(starts[i-1]); d < gap-2*time.Millisecond || d > gap+time.Second {
			t.Errorf("request %d came %v after the one before (gap %v)", i, d, gap)
		}
	}
	for _, c := range []struct {
		s    *store.Store
		want time.Duration
	}{{ahead, -2 * time.Second}, {behind, 2 * time.Second}, {s, 0}} {
		off, err := c.s.Offset(ctx)
		if err != nil || off < c.want-50*time.Millisecond || off > c.want+50*time.Millisecond {
			t.Errorf("clock skewed %v: measured offset %v (%v), want %v", c.s.Clock().Skew, off, err, c.want)
		}
	}
	// A Retry-After settled by the worker behind (no window: zero mark) holds for the one ahead.
	until := behind.Clock().Now().Add(time.Second)
	if err := behind.Schedule().SettleWindow(ctx, "skew.test", time.Time{}, until); err != nil {
		t.Fatal(err)
	}
	start, err := bookSlot(ahead, ctx, "skew.test", gap, netip.Addr{}, 0, ahead.Clock().Now())
	if err != nil {
		t.Fatal(err)
	}
	if real := start.Add(-2 * time.Second); real.Before(until.Add(2*time.Second - 2*time.Millisecond)) {
		t.Errorf("a slot at %v (machine clock) inside a Retry-After until %v", real, until.Add(2*time.Second))
	}
}
