package store_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/admit"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/dedup"
	"github.com/trawlerdev/trawler/internal/processing"
	"github.com/trawlerdev/trawler/internal/store"
)

// checkCounts fails the test unless the progress read from counters equals a scan's.
func checkCounts(t *testing.T, ctx context.Context, s *store.Store, when string) crawl.CrawlProgress {
	t.Helper()
	got, err := s.Crawls().CrawlProgress(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	want, err := s.Inspect().ProgressByScan(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	type view struct {
		ByState                                   map[crawl.URLState]int
		Skipped, ErrorClass                       map[string]int
		Fetched, Pages, Errors, Dead, Hosts, Pend int64
		Bytes                                     int64
		First, Last                               string
	}
	ts := func(t *time.Time) string {
		if t == nil {
			return ""
		}
		return t.UTC().Format(time.RFC3339Nano)
	}
	v := func(p crawl.CrawlProgress) view {
		for k, n := range p.ByState {
			if n == 0 {
				delete(p.ByState, k)
			}
		}
		for _, m := range []map[string]int{p.Skipped, p.ErrorClass} {
			for k, n := range m {
				if n == 0 {
					delete(m, k)
				}
			}
		}
		return view{p.ByState, p.Skipped, p.ErrorClass, p.Fetched, p.Pages, p.Errors, p.Dead, p.Hosts, p.Pending, p.Bytes, ts(p.FirstFetch), ts(p.LastFetch)}
	}
	if g, w := v(got), v(want); !reflect.DeepEqual(g, w) {
		t.Fatalf("%s: counters say\n%+v\na scan says\n%+v", when, g, w)
	}
	return got
}

// Progress comes from counters the writes keep (schema 0016), and they agree with a scan of
// the crawl through admission, claims, fetches that succeed, fail, are skipped or dead-
// lettered, recrawls, documents, releases, and after the counters are folded together.
func TestProgressCountersAgreeWithAScan(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	var cands []store.Candidate
	for i := range 40 {
		cands = append(cands, cand(fmt.Sprintf("http://h%d.test/%d", i%4, i), fmt.Sprintf("h%d.test", i%4), i%3))
	}
	if _, err := s.Frontier().Admit(ctx, "c", cands, admit.Budget(0), -1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Frontier().Admit(ctx, "c", cands[:10], admit.Budget(0), -1); err != nil { // seen already: no change
		t.Fatal(err)
	}
	p := checkCounts(t, ctx, s, "after admission")
	if p.ByState[crawl.URLQueued] != 40 || p.Hosts != 4 || p.Pending != 40 {
		t.Fatalf("after admission: %+v", p)
	}
	now := time.Now()
	claimed, _, err := s.Frontier().ClaimAs(ctx, "h0.test", "o", 10, time.Minute, now)
	if err != nil || len(claimed) != 10 {
		t.Fatalf("claim: %d %v", len(claimed), err)
	}
	checkCounts(t, ctx, s, "after a claim")
	det, _ := dedup.NewDetector(3, 0.9)
	for i, u := range claimed {
		o := store.FetchOutcome{CrawlID: "c", Hash: u.Hash, URL: u.URL, FetchKey: fmt.Sprintf("f%d", i), FetchedAt: now.Add(time.Duration(i) * time.Second),
			Status: 200, BodyKey: "b", ContentType: "text/html", Bytes: int64(100 + i), State: crawl.URLFetched}
		switch i % 5 {
		case 1:
			o.Status, o.Err, o.State, o.NextFetchAt, o.Attempts = 503, "HTTP 503", crawl.URLQueued, now, 1
		case 2:
			o.Status, o.Err, o.State, o.Attempts = 0, "dial tcp: i/o timed out", crawl.URLDead, 3
		case 3:
			o.FetchKey, o.State, o.SkipReason = "", crawl.URLSkipped, "robots.txt"
		}
		if i < 5 {
			if _, err := s.Fetches().RecordFetch(ctx, "h0.test", o); err != nil {
				t.Fatal(err)
			}
		} else if _, err := s.Fetches().RecordFetchGrouped(ctx, "h0.test", o); err != nil {
			t.Fatal(err)
		}
		if o.State == crawl.URLFetched {
			content := sha256.Sum256([]byte(u.URL))
			if _, err := s.Documents().SaveDocument(ctx, store.Document{CrawlID: "c", Hash: u.Hash, ContentHash: content[:], BodyKey: "k",
				Size: 10}, nil, processing.NearDup(det, "text of "+u.URL)); err != nil {
				t.Fatal(err)
			}
		}
	}
	p = checkCounts(t, ctx, s, "after fetches")
	if p.Fetched != 4 || p.Errors != 4 || p.Dead != 2 || p.Skipped["robots.txt"] != 2 || p.ErrorClass["5xx"] != 2 || p.ErrorClass["timeout"] != 2 {
		t.Fatalf("after fetches: %+v", p)
	}
	// The URL that failed with 503 succeeds now; a fetched one is fetched again (a recrawl):
	// each is one URL fetched, however many fetches it took.
	again, _, err := s.Frontier().ClaimAs(ctx, "h0.test", "o2", 10, time.Minute, now.Add(time.Hour))
	if err != nil || len(again) == 0 {
		t.Fatalf("claim again: %d %v", len(again), err)
	}
	for i, u := range again {
		if _, err := s.Fetches().RecordFetchGrouped(ctx, "h0.test", store.FetchOutcome{CrawlID: "c", Hash: u.Hash, URL: u.URL, FetchKey: fmt.Sprintf("g%d", i),
			FetchedAt: now.Add(time.Minute), Status: 200, BodyKey: "b", Bytes: 7, State: crawl.URLFetched}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Pool().Exec(ctx, `UPDATE urls SET state = 'queued', next_fetch_at = now() WHERE crawl_id = 'c' AND state = 'done'`); err != nil {
		t.Fatal(err)
	}
	if err := s.Frontier().ReleaseOwned(ctx, "h0.test", []string{"o2"}); err != nil {
		t.Fatal(err)
	}
	checkCounts(t, ctx, s, "after refetches and releases")
	// Enough writes to be folded together, and the totals unchanged by it.
	for range 30 {
		if _, err := s.Pool().Exec(ctx, `UPDATE urls SET state = CASE state WHEN 'queued' THEN 'claimed' ELSE 'queued' END
			WHERE crawl_id = 'c' AND host = 'h3.test' AND state IN ('queued', 'claimed')`); err != nil {
			t.Fatal(err)
		}
		for range 20 {
			if _, err := s.Frontier().Admit(ctx, "c", []store.Candidate{cand(fmt.Sprintf("http://h9.test/%d", time.Now().UnixNano()), "h9.test", 1)}, admit.Budget(0), -1); err != nil {
				t.Fatal(err)
			}
		}
	}
	checkCounts(t, ctx, s, "before folding")
	var rows int
	_ = s.Pool().QueryRow(ctx, `SELECT count(*) FROM crawl_counts WHERE crawl_id = 'c'`).Scan(&rows)
	if rows > 100 {
		t.Fatalf("%d counter rows after a read: want them folded into one per key", rows)
	}
	checkCounts(t, ctx, s, "after folding")
}
