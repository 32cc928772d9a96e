package store_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/admit"
	"github.com/trawlerdev/trawler/internal/crawl"
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
	if _, err := s.Frontier().Admit(ctx, "c", cands, admit.Budget(0), -1); err != nil {
		t.Fatal(err)
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, c := range cands {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := store.FetchOutcome{CrawlID: "c", Hash: c.Hash, URL: c.URL, FetchKey: c.URL, FetchedAt: time.Now(), Status: 200,
				ContentType: "text/html", BodyKey: "bodies/x", ContentHash: c.Hash, State: crawl.URLFetched, Duration: time.Millisecond}
			if i == 7 {
				o.FetchedAt = time.Date(300000, 1, 1, 0, 0, 0, 0, time.UTC) // past Postgres's last timestamp
			}
			_, errs[i] = s.Fetches().RecordFetchGrouped(ctx, c.Host, o)
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

// The one-statement group write records exactly what RecordFetch records outcome by outcome:
// the same URL states and fields and fetch rows, and a second recording of the
// same attempts changes nothing.
func TestGroupStatementRecordsWhatSingleOutcomesRecord(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	if _, err := s.Crawls().CreateCrawl(ctx, "d", crawl.Spec{Seeds: []string{"http://a.test/"}}); err != nil {
		t.Fatal(err)
	}
	paths := []string{"ok", "timeout", "robots", "gone", "changed", "unchanged"}
	outcomes := func(crawlID, hostSuffix string) ([]string, []store.FetchOutcome) {
		at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		yes, no := true, false
		var hosts []string
		var os []store.FetchOutcome
		for i, p := range paths {
			c := cand("http://h.test/"+p, "h.test", 1)
			if _, err := s.Frontier().Admit(ctx, crawlID, []store.Candidate{c}, admit.Budget(0), -1); err != nil {
				t.Fatal(err)
			}
			o := store.FetchOutcome{CrawlID: crawlID, Hash: c.Hash, URL: c.URL, FetchKey: crawlID + "/" + p, FetchedAt: at.Add(time.Duration(i) * time.Second),
				Duration: 15 * time.Millisecond, RequestHead: "GET / HTTP/1.1\r\n", ResponseHead: "HTTP/1.1 200 OK\r\n",
				NextFetchAt: at.Add(time.Hour)} // (none given is now: different on either side)
			switch p {
			case "ok":
				o.Status, o.Bytes, o.ContentType, o.ContentHash, o.BodyKey, o.ETag, o.LastModified = 200, 1234, "text/html", []byte{1, 2}, "seg/1", `"e1"`, "Mon, 01 Jan 2026 00:00:00 GMT"
				o.State, o.RecrawlS = crawl.URLFetched, 3600
			case "timeout":
				o.Err, o.State, o.Attempts, o.NextFetchAt, o.ResponseHead = "timeout", crawl.URLQueued, 1, at.Add(time.Minute), ""
			case "robots":
				o.FetchKey, o.State, o.SkipReason, o.RequestHead, o.ResponseHead = "", crawl.URLSkipped, "robots", "", ""
			case "gone":
				o.Status, o.State, o.GoneCount, o.Note = 404, crawl.URLDone, 1, "not found"
			case "changed", "unchanged":
				o.Status, o.Bytes, o.ContentHash, o.State, o.Changed = 200, 10, []byte{9}, crawl.URLFetched, &yes
				if p == "unchanged" {
					o.Changed, o.Status, o.ETag = &no, 200, `"e2"`
				}
			}
			hosts = append(hosts, fmt.Sprintf("h%d%s.test", i%2, hostSuffix))
			os = append(os, o)
		}
		return hosts, os
	}
	hostsC, outC := outcomes("c", "c")
	hostsD, outD := outcomes("d", "d")
	for round := 0; round < 2; round++ { // the second round: retried attempts, recorded already
		got, err := s.RecordFetchesTogether(ctx, hostsC, outC)
		if err != nil {
			t.Fatal(err)
		}
		for i, o := range outD {
			want, err := s.Fetches().RecordFetch(ctx, hostsD[i], o)
			if err != nil {
				t.Fatal(err)
			}
			if got[i] != want {
				t.Errorf("round %d, %s: recorded %v together, %v alone", round, paths[i], got[i], want)
			}
		}
	}
	rowsOf := func(sql string, args ...any) []string {
		rows, err := s.Pool().Query(ctx, sql, args...)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var v string
			if err := rows.Scan(&v); err != nil {
				t.Fatal(err)
			}
			out = append(out, v)
		}
		return out
	}
	urls := `SELECT concat_ws('|', url, state, skip_reason, attempts, next_fetch_at, claimed_until, fetch_count, last_status, last_fetched_at,
		last_error, etag, last_modified, encode(content_hash, 'hex'), recrawl_s, gone_count, change_count, unchanged_count)
		FROM urls WHERE crawl_id = $1 ORDER BY url`
	fetches := `SELECT concat_ws('|', u.url, f.fetched_at, f.status, f.duration_ms, f.bytes, f.truncated, f.content_type, encode(f.content_hash, 'hex'),
		f.body_key, f.final_url, f.error, encode(f.request_head, 'escape'), encode(f.response_head, 'escape'), f.changed)
		FROM fetches f JOIN urls u USING (crawl_id, url_hash) WHERE f.crawl_id = $1 ORDER BY u.url`
	// (A host's counters are its fetches summed: HostRecordOf.)
	for _, q := range []string{urls, fetches} {
		c, d := rowsOf(q, "c"), rowsOf(q, "d")
		if len(c) == 0 || fmt.Sprint(c) != fmt.Sprint(d) {
			t.Errorf("together:\n%s\nalone:\n%s", strings.Join(c, "\n"), strings.Join(d, "\n"))
		}
	}
}
