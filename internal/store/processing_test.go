package store_test

import (
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/admit"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/store"
)

// A crawl's processing claims its fetched pages across hosts, oldest first; a second
// processing does not get pages the first holds until the hold expires, the holder's retry
// takes them back at once, and processed pages are never claimed again.
func TestClaimFetchedAcrossHostsHoldsAndHandsOver(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	var cands []store.Candidate
	for _, u := range []struct{ url, host string }{{"http://a.test/1", "a.test"}, {"http://b.test/1", "b.test"}, {"http://b.test/2", "b.test"}} {
		cands = append(cands, cand(u.url, u.host, 1))
	}
	if _, err := s.Frontier().Admit(ctx, "c", cands, admit.Budget(0), -1); err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{"a.test", "b.test"} {
		claimed, _, err := s.Frontier().ClaimQuietly(ctx, host, "lease", 10, time.Minute, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range claimed {
			o := store.FetchOutcome{CrawlID: c.CrawlID, Hash: c.Hash, URL: c.URL, FetchKey: c.URL, FetchedAt: time.Now(), Status: 200,
				ContentType: "text/html", BodyKey: "bodies/" + c.URL, ContentHash: c.Hash, State: crawl.URLFetched}
			if ok, err := s.Fetches().RecordFetch(ctx, host, o); err != nil || !ok {
				t.Fatalf("record: %v %v", ok, err)
			}
		}
	}
	none := store.TakeBack{}
	first, err := s.Documents().ClaimFetched(ctx, "c", "p1", 2, time.Minute, none, time.Time{})
	if err != nil || first.CrawlState != crawl.CrawlRunning || len(first.Pages) != 2 {
		t.Fatalf("first claim: %+v %v", first, err)
	}
	hosts := map[string]bool{}
	for _, p := range first.Pages {
		hosts[p.Host] = true
		if p.BodyKey != "bodies/"+p.URL {
			t.Errorf("page %s: body %q", p.URL, p.BodyKey)
		}
	}
	if !hosts["a.test"] {
		t.Errorf("hosts %v: the oldest fetched page (a.test) comes first", hosts)
	}
	other, err := s.Documents().ClaimFetched(ctx, "c", "p2", 10, time.Minute, none, time.Time{})
	if err != nil || len(other.Pages) != 1 {
		t.Fatalf("another processing: %d pages %v: want only the one p1 does not hold", len(other.Pages), err)
	}
	// What a run's lanes hold now is theirs: a claim takes back only what they held before
	// it began (here, 10 s ago: nothing).
	again, err := s.Documents().ClaimFetched(ctx, "c", "p1/1", 10, time.Minute, store.TakeBack{Owners: []string{"p1", "p1/1"}, Ago: 10 * time.Second}, time.Time{})
	if err != nil || len(again.Pages) != 0 {
		t.Fatalf("p1's sibling lane: %d pages %v: want none of what p1 holds now", len(again.Pages), err)
	}
	retry, err := s.Documents().ClaimFetched(ctx, "c", "p1/1", 10, time.Minute, store.TakeBack{Owners: []string{"p1", "p1/1"}, Ago: 0}, time.Time{})
	if err != nil || len(retry.Pages) != 2 {
		t.Fatalf("a lane of p1's retry: %d pages %v: want the two p1 held before it began back", len(retry.Pages), err)
	}
	for _, p := range retry.Pages {
		if err := s.Documents().MarkDone(ctx, p.CrawlID, p.Hash, p.BodyKey, "processed"); err != nil {
			t.Fatal(err)
		}
	}
	// A processed page fetched again (its recrawl) is free at once, whoever held it before.
	re := retry.Pages[0]
	if _, err := s.Pool().Exec(ctx, `UPDATE urls SET state = 'queued' WHERE crawl_id = $1 AND url_hash = $2`, re.CrawlID, re.Hash); err != nil {
		t.Fatal(err)
	}
	o := store.FetchOutcome{CrawlID: re.CrawlID, Hash: re.Hash, URL: re.URL, FetchKey: re.URL + "#2", FetchedAt: time.Now(), Status: 200,
		ContentType: "text/html", BodyKey: "bodies/" + re.URL, ContentHash: re.Hash, State: crawl.URLFetched}
	if ok, err := s.Fetches().RecordFetch(ctx, re.Host, o); err != nil || !ok {
		t.Fatalf("record the recrawl: %v %v", ok, err)
	}
	if got, err := s.Documents().ClaimFetched(ctx, "c", "p4", 10, time.Minute, none, time.Time{}); err != nil || len(got.Pages) != 1 || got.Pages[0].URL != re.URL {
		t.Fatalf("the recrawled page: %+v %v", got.Pages, err)
	}
	if err := s.Documents().MarkDone(ctx, re.CrawlID, re.Hash, re.BodyKey, "processed"); err != nil {
		t.Fatal(err)
	}
	// p2's retry takes its page back; once its hold has passed, anyone may take it over.
	if back, err := s.Documents().ClaimFetched(ctx, "c", "p2", 10, time.Minute, store.TakeBack{Owners: []string{"p2"}}, time.Time{}); err != nil || len(back.Pages) != 1 {
		t.Fatalf("p2's retry: %+v %v: want its one page back", back.Pages, err)
	}
	if _, err := s.Pool().Exec(ctx, `UPDATE urls SET processing_until = now() - interval '1 second' WHERE processing_by = 'p2'`); err != nil {
		t.Fatal(err)
	}
	taken, err := s.Documents().ClaimFetched(ctx, "c", "p3", 10, time.Minute, none, time.Time{})
	if err != nil || len(taken.Pages) != 1 || taken.Pages[0].Host != "b.test" {
		t.Fatalf("after p2's hold expired: %+v %v: want its one page and nothing processed", taken.Pages, err)
	}
	if err := s.Crawls().SetCrawlState(ctx, "c", crawl.CrawlDone); err != nil {
		t.Fatal(err)
	}
	if st, err := s.Documents().ClaimFetched(ctx, "c", "p3", 10, time.Minute, none, time.Time{}); err != nil || st.CrawlState != crawl.CrawlDone {
		t.Fatalf("state after the crawl ended: %+v %v", st, err)
	}
	if st, err := s.Documents().ClaimFetched(ctx, "gone", "p3", 10, time.Minute, none, time.Time{}); err != nil || st.CrawlState != "" || len(st.Pages) != 0 {
		t.Fatalf("a crawl that does not exist: %+v %v", st, err)
	}
}

// A claim from a time reads only the pages that began to wait then or later, and says when
// the newest it claimed began to wait; a claim from the start still gets an older one.
func TestClaimFetchedFromATimeLeavesOlderPages(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	urls := []string{"http://a.test/1", "http://a.test/2", "http://a.test/3"}
	var cands []store.Candidate
	for _, u := range urls {
		cands = append(cands, cand(u, "a.test", 1))
	}
	if _, err := s.Frontier().Admit(ctx, "c", cands, admit.Budget(0), -1); err != nil {
		t.Fatal(err)
	}
	claimed, _, err := s.Frontier().ClaimQuietly(ctx, "a.test", "lease", 10, time.Minute, time.Now())
	if err != nil || len(claimed) != len(urls) {
		t.Fatalf("claimed %d, %v", len(claimed), err)
	}
	waiting := map[string]time.Time{} // by URL, as recorded
	for _, c := range claimed {       // one transaction each: each later than the one before
		o := store.FetchOutcome{CrawlID: c.CrawlID, Hash: c.Hash, URL: c.URL, FetchKey: c.URL, FetchedAt: time.Now(), Status: 200,
			ContentType: "text/html", BodyKey: "bodies/" + c.URL, ContentHash: c.Hash, State: crawl.URLFetched}
		if ok, err := s.Fetches().RecordFetch(ctx, "a.test", o); err != nil || !ok {
			t.Fatalf("record: %v %v", ok, err)
		}
		var at time.Time
		if err := s.Pool().QueryRow(ctx, `SELECT updated_at FROM urls WHERE crawl_id = 'c' AND url_hash = $1`, c.Hash).Scan(&at); err != nil {
			t.Fatal(err)
		}
		waiting[c.URL] = at
	}
	oldest, middle, newest := claimed[0].URL, claimed[1].URL, claimed[2].URL
	if !waiting[oldest].Before(waiting[middle]) || !waiting[middle].Before(waiting[newest]) {
		t.Fatalf("pages began to wait at %v: want three times in order", waiting)
	}
	later, err := s.Documents().ClaimFetched(ctx, "c", "p", 10, time.Minute, store.TakeBack{}, waiting[middle])
	if err != nil || len(later.Pages) != 2 || !later.Newest.Equal(waiting[newest]) {
		t.Fatalf("a claim from the middle page's time: %d pages, newest %v, %v; want 2, %v", len(later.Pages), later.Newest, err, waiting[newest])
	}
	for _, p := range later.Pages {
		if p.URL == oldest {
			t.Errorf("a claim from the middle page's time took the oldest page")
		}
	}
	all, err := s.Documents().ClaimFetched(ctx, "c", "p", 10, time.Minute, store.TakeBack{}, time.Time{})
	if err != nil || len(all.Pages) != 1 || all.Pages[0].URL != oldest || !all.Newest.Equal(waiting[oldest]) {
		t.Fatalf("a claim from the start: %+v, %v; want the oldest page, left by the claim from later", all, err)
	}
}
