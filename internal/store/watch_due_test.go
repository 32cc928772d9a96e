package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/admit"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/store"
)

// An admission tells, as it commits, every host it gave new URLs, however many: a fetch lease
// waiting on one hears of it; a waiter on another host hears nothing.
func TestAdmissionTellsWaitersOfItsHosts(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	w := listening(t, s, ctx)
	// Enough hosts with long names to need several notifications.
	var cands []store.Candidate
	long := strings.Repeat("x", 60)
	for i := 0; i < 400; i++ {
		h := fmt.Sprintf("%s%03d.test", long, i)
		cands = append(cands, cand("http://"+h+"/", h, 0))
	}
	last := cands[len(cands)-1].Host
	lastDue, stopLast := w.WaitDue(last)
	defer stopLast()
	otherDue, stopOther := w.WaitDue("other.test")
	defer stopOther()
	if _, err := s.Frontier().Admit(ctx, "c", cands, admit.Budget(0), -1); err != nil {
		t.Fatal(err)
	}
	select {
	case <-lastDue:
	case <-time.After(5 * time.Second):
		t.Fatal("the admission's last host was not told")
	}
	select {
	case <-otherDue:
		t.Error("a host the admission did not name was told")
	case <-time.After(200 * time.Millisecond):
	}
	// A second admission of the same URLs gives nobody anything new: no news.
	if _, err := s.Frontier().Admit(ctx, "c", cands[len(cands)-1:], admit.Budget(0), -1); err != nil {
		t.Fatal(err)
	}
	select {
	case <-lastDue:
		t.Error("an admission of nothing new told its host")
	case <-time.After(200 * time.Millisecond):
	}
}

// Pages finishing their processing tell their hosts: the fetch lease waiting on them looks
// again (for their recrawl, or to end).
func TestFinishedProcessingTellsItsHosts(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	w := listening(t, s, ctx)
	a := cand("http://a.test/1", "a.test", 1)
	if _, err := s.Frontier().Admit(ctx, "c", []store.Candidate{a}, admit.Budget(0), -1); err != nil {
		t.Fatal(err)
	}
	claimed, _, err := s.Frontier().Claim(ctx, "a.test", 1, time.Minute, time.Now())
	if err != nil || len(claimed) != 1 {
		t.Fatalf("claim %v %v", claimed, err)
	}
	changed := true
	o := store.FetchOutcome{CrawlID: "c", Hash: a.Hash, URL: a.URL, FetchKey: a.URL, FetchedAt: time.Now(), Status: 200,
		ContentType: "text/html", BodyKey: "bodies/x", ContentHash: []byte{1}, State: crawl.URLFetched, Changed: &changed}
	if ok, err := s.Fetches().RecordFetch(ctx, "a.test", o); err != nil || !ok {
		t.Fatalf("record: %v %v", ok, err)
	}
	due, stop := w.WaitDue("a.test")
	defer stop()
	at := time.Now().Add(time.Hour)
	if err := s.Documents().FinishProcessed(ctx, []store.Document{{CrawlID: "c", Hash: a.Hash, RecrawlAt: &at, RecrawlS: 3600}}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-due:
	case <-time.After(5 * time.Second):
		t.Fatal("finishing a page's processing did not tell its host")
	}
}

// listening starts a watch that lives as long as ctx (or the test) and waits until it listens.
func listening(t *testing.T, s *store.Store, ctx context.Context) *store.ControlWatch {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	w := s.WatchControl(ctx)
	deadline := time.Now().Add(10 * time.Second)
	for _, live := w.Epoch(); !live; _, live = w.Epoch() {
		if time.Now().After(deadline) {
			t.Fatal("the watch never listened")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return w
}
