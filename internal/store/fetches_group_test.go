package store_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/store"
)

// Outcomes recorded at the same time are written together, and one that Postgres refuses
// costs only itself: every other outcome of its group is recorded, once.
func TestGroupedOutcomesAreAllRecordedAndARefusedOneAlone(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	const n = 40
	var cands []store.Candidate
	for i := 0; i < n; i++ {
		cands = append(cands, cand(fmt.Sprintf("http://h%d.test/%d", i%5, i), fmt.Sprintf("h%d.test", i%5), 1))
	}
	if _, err := s.Admit(ctx, "c", cands); err != nil {
		t.Fatal(err)
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, c := range cands {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := store.FetchOutcome{CrawlID: "c", Hash: c.Hash, URL: c.URL, FetchKey: c.URL, FetchedAt: time.Now(), Status: 200,
				ContentType: "text/html", BodyKey: "bodies/x", ContentHash: c.Hash, State: store.StateFetched, Duration: time.Millisecond}
			if i == 7 {
				o.FetchedAt = time.Date(300000, 1, 1, 0, 0, 0, 0, time.UTC) // past Postgres's last timestamp
			}
			_, errs[i] = s.RecordFetchGrouped(ctx, c.Host, o)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if (i == 7) != (err != nil) || (i == 7 && !store.IsDataError(err)) {
			t.Errorf("outcome %d: %v", i, err)
		}
	}
	var fetched, rows int
	if err := s.Pool().QueryRow(ctx, `SELECT count(*) FILTER (WHERE state = 'fetched'), (SELECT count(*) FROM fetches WHERE crawl_id = 'c')
		FROM urls WHERE crawl_id = 'c'`).Scan(&fetched, &rows); err != nil {
		t.Fatal(err)
	}
	if fetched != n-1 || rows != n-1 {
		t.Errorf("%d URLs fetched, %d fetch rows: want %d of each", fetched, rows, n-1)
	}
}
