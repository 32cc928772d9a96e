package store_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/admit"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/pacing"
	"github.com/trawlerdev/trawler/internal/store"
	"github.com/trawlerdev/trawler/internal/testenv"
)

// Creating a crawl returns its spec as recorded, in the same step: the new one, or on a
// repeated start the first record, whatever the repeat carries.
func TestCreateCrawlReturnsTheRecord(t *testing.T) {
	pool, _ := testenv.Postgres(t)
	s := store.New(pool)
	ctx := t.Context()
	first := crawl.Spec{Seeds: []string{"http://a.test/"}, MaxPages: 9}.WithDefaults()
	got, err := s.Crawls().CreateCrawl(ctx, "c", first)
	if err != nil || !slices.Equal(got.Seeds, first.Seeds) || got.MaxPages != 9 || got.Delay != first.Delay {
		t.Fatalf("created %+v, %v; want %+v", got, err, first)
	}
	again, err := s.Crawls().CreateCrawl(ctx, "c", crawl.Spec{Seeds: []string{"http://b.test/"}, MaxPages: 1})
	if err != nil || !slices.Equal(again.Seeds, first.Seeds) || again.MaxPages != 9 {
		t.Errorf("a repeated start got %+v, %v; want the first record", again, err)
	}
}

// A crawl's throttle goes into its recorded spec, where every worker's crawl rules read it:
// throttles add up (a delay, then a concurrency) and a reset removes them.
func TestThrottleCrawlEditsTheSpec(t *testing.T) {
	pool, _ := testenv.Postgres(t)
	s := store.New(pool)
	ctx := t.Context()
	if _, err := s.Crawls().CreateCrawl(ctx, "c", crawl.Spec{Seeds: []string{"http://a.test/"}}.WithDefaults()); err != nil {
		t.Fatal(err)
	}
	read := func() crawl.Spec {
		t.Helper()
		var spec crawl.Spec
		if err := s.Crawls().CrawlSpec(ctx, "c", &spec); err != nil {
			t.Fatal(err)
		}
		return spec
	}
	if err := s.Crawls().ThrottleCrawl(ctx, "c", 5*time.Second, 0, false); err != nil {
		t.Fatal(err)
	}
	if err := s.Crawls().ThrottleCrawl(ctx, "c", 0, 1, false); err != nil {
		t.Fatal(err)
	}
	if p := pacing.OfCrawl(read()); p.Delay != 5*time.Second || p.Concurrency != 1 {
		t.Errorf("throttled pacing %+v, want 5s and 1", p)
	}
	if err := s.Crawls().ThrottleCrawl(ctx, "c", 0, 0, true); err != nil {
		t.Fatal(err)
	}
	if spec := read(); spec.Throttle != nil || spec.Delay.D() != time.Second {
		t.Errorf("after the reset: %+v, delay %v", spec.Throttle, spec.Delay)
	}
}

// A stop never waits on a URL another transaction holds while it holds others: it skips what
// is free, commits, and comes back for the rest once its holder is done. A stop that locked
// the crawl's URLs in one statement deadlocked with a fetch group that held one of them and
// then wanted another (issue 49); here the holder takes the others after the stop began, and
// neither side fails.
func TestStopSkipsAroundAHeldURLWithoutDeadlock(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	var batch []store.Candidate
	for i := 0; i < 40; i++ {
		batch = append(batch, cand(fmt.Sprintf("http://a.test/%d", i), "a.test", 1))
	}
	if _, err := s.Frontier().Admit(ctx, "c", batch, admit.Budget(0), -1); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond) // the held URL comes last in any order the stop reads
	held := cand("http://a.test/held", "a.test", 1)
	if _, err := s.Frontier().Admit(ctx, "c", []store.Candidate{held}, admit.Budget(0), -1); err != nil {
		t.Fatal(err)
	}
	tx, err := s.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `SELECT 1 FROM urls WHERE crawl_id = 'c' AND url_hash = $1 FOR UPDATE`, held.Hash); err != nil {
		t.Fatal(err)
	}
	stopped := make(chan error, 1)
	go func() { stopped <- s.Crawls().SetCrawlState(ctx, "c", crawl.CrawlStopped) }()
	// The stop has skipped every URL but the held one before the holder goes on (the old stop
	// held them, uncommitted, waiting for the held one).
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var n int
		if err := s.Pool().QueryRow(ctx, `SELECT count(*) FROM urls WHERE crawl_id = 'c' AND state = 'skipped'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 40 {
			break
		}
		if time.Now().After(deadline) {
			t.Log("the stop skipped nothing visible within 5 s: it holds the URLs it could take")
			break
		}
	}
	// The holder now wants the others, as a fetch group's statement does: were the stop holding
	// them while it waited for the held one, Postgres would abort one of the two.
	if _, err := tx.Exec(ctx, `UPDATE urls SET attempts = attempts + 1 WHERE crawl_id = 'c' AND url_hash <> $1`, held.Hash); err != nil {
		t.Fatalf("the holder, after the stop began: %v", err)
	}
	select {
	case err := <-stopped:
		t.Fatalf("the stop returned (%v) while a URL of the crawl was still held unskipped", err)
	default:
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-stopped:
		if err != nil {
			t.Fatalf("stop: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the stop did not end after the held URL was released")
	}
	var skipped, all int
	if err := s.Pool().QueryRow(ctx, `SELECT count(*) FILTER (WHERE state = 'skipped' AND skip_reason = 'crawl stopped'), count(*)
		FROM urls WHERE crawl_id = 'c'`).Scan(&skipped, &all); err != nil {
		t.Fatal(err)
	}
	if skipped != all || all != 41 {
		t.Fatalf("%d of %d URLs skipped by the stop, want all 41", skipped, all)
	}
}
