package store_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/trawlerdev/trawler/internal/admit"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/store"
)

// admitCounts reads what a crawl's admissions counted (crawls.admitted, crawls.hosts) against
// what they wrote (URLs not skipped over a budget, crawl_hosts rows and their admitted counts).
func admitCounts(t *testing.T, ctx context.Context, s *store.Store, crawlID string) (admitted, hosts, urls, hostRows, hostAdmitted int) {
	t.Helper()
	err := s.Pool().QueryRow(ctx, `SELECT c.admitted, c.hosts,
			(SELECT count(*) FROM urls WHERE crawl_id = $1 AND coalesce(skip_reason, '') NOT IN ($2, $3)),
			(SELECT count(*) FROM crawl_hosts WHERE crawl_id = $1),
			(SELECT coalesce(sum(admitted), 0) FROM crawl_hosts WHERE crawl_id = $1)
		FROM crawls c WHERE c.id = $1`, crawlID, crawl.SkipBudget, crawl.SkipMaxHosts).Scan(&admitted, &hosts, &urls, &hostRows, &hostAdmitted)
	if err != nil {
		t.Fatal(err)
	}
	return
}

// Admissions of one crawl run side by side when it has no budgets, and when it has one they
// queue on its row: either way none fails (no deadlock between them: overlapping URLs in any
// order, in-links to queued URLs, new hosts; nor with a stop, which locks the crawl's row and
// then its queued URLs), and the crawl's counters add up to what was written.
func TestConcurrentAdmissionsCountWhatTheyWrite(t *testing.T) {
	for _, tc := range []struct {
		name     string
		maxPages int
		stop     bool
	}{{"no budget", 0, false}, {"a page budget", 150, false}, {"no budget, stopped meanwhile", 0, true}} {
		t.Run(tc.name, func(t *testing.T) {
			s, ctx := newStore(t, tc.maxPages, 0)
			var pool []store.Candidate
			for i := 0; i < 400; i++ {
				host := fmt.Sprintf("h%02d.test", i%40)
				pool = append(pool, cand(fmt.Sprintf("http://%s/%d", host, i), host, 1))
			}
			admitted0, hosts0, urls0, _, _ := admitCounts(t, ctx, s, "c")
			var wg sync.WaitGroup
			errs := make(chan error, 8*15+1)
			if tc.stop {
				wg.Add(1)
				go func() {
					defer wg.Done()
					time.Sleep(50 * time.Millisecond)
					if err := s.Crawls().SetCrawlState(ctx, "c", crawl.CrawlStopped); err != nil {
						errs <- err
					}
				}()
			}
			for w := 0; w < 8; w++ {
				wg.Add(1)
				go func(seed int64) {
					defer wg.Done()
					r := rand.New(rand.NewSource(seed))
					for round := 0; round < 15; round++ {
						batch := make([]store.Candidate, 0, 40)
						for _, i := range r.Perm(len(pool))[:40] {
							batch = append(batch, pool[i])
						}
						if _, err := s.Frontier().Admit(ctx, "c", batch, admit.Budget(0), -1); err != nil {
							errs <- err
						}
					}
				}(int64(w))
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			admitted, hosts, urls, hostRows, hostAdmitted := admitCounts(t, ctx, s, "c")
			if admitted-admitted0 != urls-urls0 || hosts-hosts0 != hostRows || hostAdmitted != admitted-admitted0 {
				t.Fatalf("crawl counted %d admitted and %d hosts; wrote %d URLs, %d host rows holding %d",
					admitted-admitted0, hosts-hosts0, urls-urls0, hostRows, hostAdmitted)
			}
			if tc.maxPages > 0 && admitted != tc.maxPages {
				t.Fatalf("admitted %d under a budget of %d", admitted, tc.maxPages)
			}
			if tc.maxPages == 0 && !tc.stop && urls-urls0 != len(pool) {
				t.Fatalf("%d of %d URLs admitted without a budget", urls-urls0, len(pool))
			}
		})
	}
}

// An admission holds its crawl's row until it commits (schema 0048 dropped urls' foreign key
// to crawls, which did this URL by URL): a deletion that holds the row first makes the
// admission wait before it writes anything, and once the crawl is gone the admission finds
// no crawl and inserts nothing, with or without a budget. No URL outlives its crawl.
func TestAdmissionWaitsForADeletionAndLeavesNoURLBehind(t *testing.T) {
	for _, maxPages := range []int{0, 100} {
		t.Run(fmt.Sprintf("max pages %d", maxPages), func(t *testing.T) {
			s, ctx := newStore(t, maxPages, 0)
			// The host is known: its crawl_hosts row, whose foreign key would also wait, is there.
			if _, err := s.Frontier().Admit(ctx, "c", []store.Candidate{cand("http://a.test/", "a.test", 0)}, admit.Budget(0), -1); err != nil {
				t.Fatal(err)
			}
			tx, err := s.Pool().Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = tx.Rollback(ctx) }()
			if _, err := tx.Exec(ctx, `SELECT 1 FROM crawls WHERE id = 'c' FOR UPDATE`); err != nil { // as DeleteCrawlRows
				t.Fatal(err)
			}
			admitted := make(chan error, 1)
			go func() {
				_, err := s.Frontier().Admit(ctx, "c", []store.Candidate{cand("http://a.test/late", "a.test", 1)}, admit.Budget(0), -1)
				admitted <- err
			}()
			// The admission waits for the crawl's row (a lock wait in pg_stat_activity) before the
			// deletion goes on, so the race is run, not passed over.
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				select {
				case err := <-admitted:
					t.Fatalf("the admission went ahead (%v) while a deletion held its crawl", err)
				default:
				}
				var waiting bool
				if err := s.Pool().QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity
					WHERE datname = current_database() AND wait_event_type = 'Lock')`).Scan(&waiting); err != nil {
					t.Fatal(err)
				}
				if waiting {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the admission neither went ahead nor waited for the crawl's row within 10 s")
				}
			}
			if _, err := tx.Exec(ctx, `DELETE FROM crawl_counts WHERE crawl_id = 'c'; DELETE FROM crawl_hosts WHERE crawl_id = 'c';
				DELETE FROM urls WHERE crawl_id = 'c'; DELETE FROM crawls WHERE id = 'c'`); err != nil {
				t.Fatal(err)
			}
			if err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			// It waited before it wrote anything: a URL it had inserted unlocked would have met the
			// deletion's delete of the crawl's URLs, and one of the two been aborted (40P01).
			if err := <-admitted; !errors.Is(err, pgx.ErrNoRows) {
				t.Errorf("an admission into a crawl deleted meanwhile: %v; want it to find no crawl", err)
			}
			var left int
			if err := s.Pool().QueryRow(ctx, `SELECT count(*) FROM urls WHERE crawl_id = 'c'`).Scan(&left); err != nil || left != 0 {
				t.Errorf("%d URLs of the deleted crawl left (%v)", left, err)
			}
		})
	}
}
