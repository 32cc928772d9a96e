package store_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/admit"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/dedup"
	"github.com/trawlerdev/trawler/internal/processing"
	"github.com/trawlerdev/trawler/internal/store"
)

// saveText stores a document of text under url, returning its duplicate verdict.
func saveText(t testing.TB, ctx context.Context, s *store.Store, det *dedup.Detector, url, text string) *store.Dup {
	t.Helper()
	return saveTextIn(t, ctx, s, det, "c", url, text)
}

// saveTextIn is saveText into crawl crawlID.
func saveTextIn(t testing.TB, ctx context.Context, s *store.Store, det *dedup.Detector, crawlID, url, text string) *store.Dup {
	t.Helper()
	c := cand(url, "a.test", 1)
	if _, err := s.Frontier().Admit(ctx, crawlID, []store.Candidate{c}, admit.Budget(0), -1); err != nil {
		t.Fatal(err)
	}
	content := sha256.Sum256([]byte(text))
	dup, err := s.Documents().SaveDocument(ctx, store.Document{CrawlID: crawlID, Hash: c.Hash, ContentHash: content[:], BodyKey: "k",
		Size: int64(len(text))}, nil, processing.NearDup(det, text))
	if err != nil {
		t.Fatal(err)
	}
	return dup
}

// corpusTrio is a generated corpus and three of its documents: the first original, a
// near-duplicate of it, and an unrelated original.
func corpusTrio(t *testing.T) (docs []dedup.CorpusDoc, original, near, other int) {
	t.Helper()
	docs = dedup.GenerateCorpus(11, 60)
	original, near, other = -1, -1, -1
	for i, d := range docs {
		switch {
		case d.Cluster == i && original < 0:
			original = i
		case d.Cluster == original && near < 0:
			near = i
		case d.Cluster == i && i != original && other < 0:
			other = i
		}
	}
	if near < 0 || other < 0 {
		t.Fatal("the corpus has no near-duplicate of its first original")
	}
	return docs, original, near, other
}

func TestSaveDocumentMarksNearDuplicatesThroughTheIndex(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	det, _ := dedup.NewDetector(3, 0.9)
	docs, original, near, other := corpusTrio(t)
	if dup := saveText(t, ctx, s, det, "http://a.test/original", docs[original].Text); dup != nil {
		t.Fatalf("the first document is a duplicate of %x", dup.Of)
	}
	if dup := saveText(t, ctx, s, det, "http://a.test/other", docs[other].Text); dup != nil {
		t.Fatalf("an unrelated document matched (%s %.2f)", dup.Kind, dup.Score)
	}
	dup := saveText(t, ctx, s, det, "http://a.test/near", docs[near].Text)
	if dup == nil || dup.Kind == store.DupExact {
		t.Fatalf("near-duplicate not found: %+v", dup)
	}
	want := cand("http://a.test/original", "a.test", 1).Hash
	if string(dup.Of) != string(want) {
		t.Fatalf("near-duplicate of %x, want the original %x", dup.Of, want)
	}
	// Saved again (a retried activity), the verdict stands and the index holds one copy.
	if again := saveText(t, ctx, s, det, "http://a.test/near", docs[near].Text); again == nil || again.Kind != dup.Kind {
		t.Fatalf("second save: %+v", again)
	}
	var kind string
	var score float64
	var keys int
	_ = s.Pool().QueryRow(ctx, `SELECT dup_kind, dup_score, (SELECT count(*) FROM dedup_keys k WHERE k.url_hash = d.url_hash)
		FROM documents d WHERE url_hash = $1`, cand("http://a.test/near", "a.test", 1).Hash).Scan(&kind, &score, &keys)
	if kind != dup.Kind || keys != len(det.Keys(det.Fingerprint(docs[near].Text))) {
		t.Fatalf("stored kind %q score %v keys %d", kind, score, keys)
	}
}

// Near-duplicates saved at the same moment by different workers must still find each other:
// exactly one of them is the original.
func TestConcurrentNearDuplicatesFindEachOther(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	det, _ := dedup.NewDetector(3, 0.9)
	base := dedup.GenerateCorpus(5, 1)[0].Text
	const n = 8
	dups := make([]*store.Dup, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			dups[i] = saveText(t, ctx, s, det, fmt.Sprintf("http://a.test/copy/%d", i), base+fmt.Sprintf(" edition %d", i))
		}(i)
	}
	wg.Wait()
	originals := 0
	for _, d := range dups {
		if d == nil {
			originals++
		}
	}
	if originals != 1 {
		t.Fatalf("%d of %d concurrent near-duplicates think they are the original", originals, n)
	}
}

// A save of fingerprinted documents takes its crawl's one near-duplicate lock, and a lock for
// each document's URL and content, not one for each of its 20 near-duplicate keys (4,000 more
// for 200 documents: a few such saves at once could fill Postgres's shared lock table). Held
// by another transaction, the crawl's lock makes the save wait, holding no more than that.
func TestASaveOfFingerprintedDocumentsTakesTheCrawlsOneNearLock(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	det, _ := dedup.NewDetector(3, 0.9)
	docs := dedup.GenerateCorpus(13, 200)
	var saves []store.DocumentSave
	for i, d := range docs {
		c := cand(fmt.Sprintf("http://a.test/%d", i), "a.test", 1)
		if _, err := s.Frontier().Admit(ctx, "c", []store.Candidate{c}, admit.Budget(0), -1); err != nil {
			t.Fatal(err)
		}
		content := sha256.Sum256([]byte(d.Text))
		saves = append(saves, store.DocumentSave{Near: processing.NearDup(det, d.Text),
			Doc: store.Document{CrawlID: "c", Hash: c.Hash, ContentHash: content[:], BodyKey: "k", Size: 1}})
	}
	holder, err := s.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Rollback(ctx)
	var holderPID int
	if err := holder.QueryRow(ctx, `SELECT pg_backend_pid() FROM (SELECT pg_advisory_xact_lock($1)) l`, store.NearLockOf("c")).Scan(&holderPID); err != nil {
		t.Fatal(err)
	}
	saved := make(chan error, 1)
	go func() {
		_, err := s.Documents().SaveDocuments(ctx, saves)
		saved <- err
	}()
	var held, waiting int
	for deadline := time.Now().Add(10 * time.Second); waiting == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if err := s.Pool().QueryRow(ctx, `SELECT count(*) FILTER (WHERE granted), count(*) FILTER (WHERE NOT granted)
			FROM pg_locks WHERE locktype = 'advisory' AND pid <> $1 AND pid <> pg_backend_pid()`, holderPID).Scan(&held, &waiting); err != nil {
			t.Fatal(err)
		}
	}
	if waiting != 1 || held > 2*len(saves) {
		t.Errorf("the save waits on %d locks holding %d: want it waiting on the crawl's near-duplicate lock, holding at most %d", waiting, held, 2*len(saves))
	}
	if err := holder.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-saved; err != nil {
		t.Fatal(err)
	}
}

// BenchmarkNearDuplicateSave10k is the cost of saving a document — near-duplicate lookup
// through the Postgres index included — into a crawl that already holds 10,000 documents.
func BenchmarkNearDuplicateSave10k(b *testing.B) {
	s, ctx := newStoreB(b)
	det, _ := dedup.NewDetector(3, 0.9)
	docs := dedup.GenerateCorpus(9, 10000+b.N)
	for i := 0; i < 10000; i++ {
		saveText(b, ctx, s, det, fmt.Sprintf("http://a.test/corpus/%d", i), docs[i].Text)
	}
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		saveText(b, ctx, s, det, fmt.Sprintf("http://a.test/new/%d", i), docs[10000+i].Text)
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/float64(b.N), "µs/doc")
}

// A saved document keeps its URL pending until FinishProcessed, which runs once the page's
// links are admitted: the crawl cannot end in between.
func TestProcessedPagesStayPendingUntilFinished(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	a, b := cand("http://a.test/a", "a.test", 1), cand("http://a.test/b", "a.test", 1)
	if _, err := s.Frontier().Admit(ctx, "c", []store.Candidate{a, b}, admit.Budget(0), -1); err != nil {
		t.Fatal(err)
	}
	var docs []store.Document
	recrawl := time.Now().Add(time.Hour)
	for i, c := range []store.Candidate{a, b} {
		if _, err := s.Fetches().RecordFetch(ctx, "a.test", store.FetchOutcome{CrawlID: "c", Hash: c.Hash, URL: c.URL, FetchKey: c.URL,
			FetchedAt: time.Now(), Status: 200, BodyKey: "k", ContentType: "text/html", Bytes: 10, State: crawl.URLFetched}); err != nil {
			t.Fatal(err)
		}
		content := sha256.Sum256([]byte(c.URL))
		d := store.Document{CrawlID: "c", Hash: c.Hash, ContentHash: content[:], BodyKey: "k", Size: 10}
		if i == 1 {
			d.RecrawlAt, d.RecrawlS = &recrawl, 3600
		}
		if _, err := s.Documents().SaveDocument(ctx, d, nil, nil); err != nil {
			t.Fatal(err)
		}
		docs = append(docs, d)
	}
	if p, _ := s.Crawls().CrawlProgress(ctx, "c"); p.Pending != 2 || p.ByState["fetched"] != 2 {
		t.Fatalf("saved but not finished: %+v", p)
	}
	if err := s.Documents().FinishProcessed(ctx, docs); err != nil {
		t.Fatal(err)
	}
	p, _ := s.Crawls().CrawlProgress(ctx, "c")
	if p.ByState["done"] != 1 || p.ByState["queued"] != 1 || p.ByState["fetched"] != 0 {
		t.Fatalf("finished: done and queued for the recrawl: %+v", p)
	}
}

// refetchedPage admits one page of crawl c; fetched records a fetch of it under a fetch key
// with a body (its URL queued again first, as its recrawl would be), and state counts the
// crawl's URLs by state.
func refetchedPage(t *testing.T, ctx context.Context, s *store.Store) (store.Candidate, func(key, body string, at time.Time), func() map[crawl.URLState]int) {
	t.Helper()
	a := cand("http://a.test/a", "a.test", 1)
	if _, err := s.Frontier().Admit(ctx, "c", []store.Candidate{a}, admit.Budget(0), -1); err != nil {
		t.Fatal(err)
	}
	fetched := func(key, body string, at time.Time) {
		t.Helper()
		if _, err := s.Pool().Exec(ctx, `UPDATE urls SET state = 'queued' WHERE crawl_id = 'c' AND url_hash = $1`, a.Hash); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Fetches().RecordFetch(ctx, "a.test", store.FetchOutcome{CrawlID: "c", Hash: a.Hash, URL: a.URL, FetchKey: key,
			FetchedAt: at, Status: 200, BodyKey: body, ContentType: "text/html", Bytes: 10, State: crawl.URLFetched}); err != nil {
			t.Fatal(err)
		}
	}
	state := func() map[crawl.URLState]int {
		p, _ := s.Crawls().CrawlProgress(ctx, "c")
		return p.ByState
	}
	return a, fetched, state
}

// A page is finished for the fetch whose body was processed: a late finish of an older fetch
// (a run Temporal timed out, finishing what it held beside its retry) leaves a newer fetch of
// the page, recrawled in between, to its own processing.
func TestALateFinishLeavesANewerFetchToItsProcessing(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	a, fetched, state := refetchedPage(t, ctx, s)
	now := time.Now()
	doc := func(body string) store.Document {
		return store.Document{CrawlID: "c", Hash: a.Hash, BodyKey: body, RecrawlAt: &now, RecrawlS: 1}
	}
	fetched("first", "body/1", time.Now())
	if err := s.Documents().FinishProcessed(ctx, []store.Document{doc("body/1")}); err != nil || state()["queued"] != 1 {
		t.Fatalf("first fetch finished: %v, %v", state(), err)
	}
	fetched("second", "body/2", time.Now())
	if err := s.Documents().FinishProcessed(ctx, []store.Document{doc("body/1")}); err != nil || state()["fetched"] != 1 {
		t.Fatalf("the first fetch finished again, late: %v, %v; want the second fetch left fetched", state(), err)
	}
	if err := s.Documents().FinishProcessed(ctx, []store.Document{doc("body/2")}); err != nil || state()["queued"] != 1 {
		t.Fatalf("the second fetch finished: %v, %v", state(), err)
	}
}

// A page set aside (unreadable, unstorable) is done for the fetch whose body was read, as a
// finished one is: a late verdict on an older fetch leaves a newer fetch of the page to its
// own processing.
func TestALateMarkDoneLeavesANewerFetchToItsProcessing(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	a, fetched, state := refetchedPage(t, ctx, s)
	fetched("first", "body/1", time.Now())
	fetched("second", "body/2", time.Now())
	if err := s.Documents().MarkDone(ctx, "c", a.Hash, "body/1", "unreadable"); err != nil || state()["fetched"] != 1 {
		t.Fatalf("a late verdict on the first fetch: %v, %v; want the second fetch left fetched", state(), err)
	}
	if err := s.Documents().MarkDone(ctx, "c", a.Hash, "body/2", "unreadable"); err != nil || state()["done"] != 1 {
		t.Fatalf("the verdict on the second fetch: %v, %v; want it done", state(), err)
	}
}

// A page is handed out with the body of its last recorded fetch, whatever the fetching
// workers' clocks say: a recrawl recorded by a worker whose clock runs behind is still the
// fetch the page's guards know (urls.body_key), so its processing can finish it. Ordered by
// fetched_at, the claim handed out the older body, which the guards refused every time.
func TestAPageIsHandedOutWithItsLastRecordedFetchWhateverTheClocks(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	a, fetched, state := refetchedPage(t, ctx, s)
	now := time.Now()
	fetched("first", "body/1", now)
	fetched("second", "body/2", now.Add(-time.Hour))
	stale, err := s.Frontier().StaleFetched(ctx, "c", time.Now().Add(time.Minute), 10)
	if err != nil || len(stale) != 1 || stale[0].BodyKey != "body/2" {
		t.Fatalf("stale pages %+v, %v; want the second fetch's body", stale, err)
	}
	claim, err := s.Documents().ClaimFetched(ctx, "c", "p", 10, time.Minute, store.TakeBack{}, time.Time{})
	if err != nil || len(claim.Pages) != 1 || claim.Pages[0].BodyKey != "body/2" {
		t.Fatalf("claimed %+v, %v; want the second fetch's body", claim.Pages, err)
	}
	doc := store.Document{CrawlID: "c", Hash: a.Hash, BodyKey: claim.Pages[0].BodyKey, RecrawlAt: &now, RecrawlS: 1}
	if err := s.Documents().FinishProcessed(ctx, []store.Document{doc}); err != nil || state()["queued"] != 1 {
		t.Fatalf("the claimed page finished: %v, %v; want it queued for its recrawl", state(), err)
	}
}

// Documents saved in one batch find each other: an exact copy and a near-duplicate of a
// document earlier in the same batch are marked, an unrelated one is not.
func TestSaveDocumentsInOneBatchFindEachOther(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	det, _ := dedup.NewDetector(3, 0.9)
	docs, original, near, other := corpusTrio(t)
	texts := map[string]string{"original": docs[original].Text, "copy": docs[original].Text, "near": docs[near].Text, "other": docs[other].Text}
	var saves []store.DocumentSave
	for _, name := range []string{"original", "copy", "near", "other"} {
		c := cand("http://a.test/"+name, "a.test", 1)
		if _, err := s.Frontier().Admit(ctx, "c", []store.Candidate{c}, admit.Budget(0), -1); err != nil {
			t.Fatal(err)
		}
		content := sha256.Sum256([]byte(texts[name]))
		saves = append(saves, store.DocumentSave{Near: processing.NearDup(det, texts[name]), Links: []store.Link{{From: c.Hash, To: c.Hash}},
			Doc: store.Document{CrawlID: "c", Hash: c.Hash, ContentHash: content[:], BodyKey: "k", Size: 1}})
	}
	dups, err := s.Documents().SaveDocuments(ctx, saves)
	if err != nil {
		t.Fatal(err)
	}
	orig := cand("http://a.test/original", "a.test", 1).Hash
	if dups[0] != nil || dups[3] != nil {
		t.Errorf("original or unrelated marked a duplicate: %+v %+v", dups[0], dups[3])
	}
	if dups[1] == nil || dups[1].Kind != store.DupExact || string(dups[1].Of) != string(orig) {
		t.Errorf("copy: %+v, want an exact duplicate of the original", dups[1])
	}
	if dups[2] == nil || dups[2].Kind == store.DupExact || string(dups[2].Of) != string(orig) {
		t.Errorf("near: %+v, want a near-duplicate of the original", dups[2])
	}
	again, err := s.Documents().SaveDocuments(ctx, saves) // a retried batch decides the same
	if err != nil || again[0] != nil || again[1] == nil || again[2] == nil || again[3] != nil {
		t.Errorf("saved again: %+v %v", again, err)
	}
	// A batch naming a document twice (a page processed twice at once) saves it in order.
	twice, err := s.Documents().SaveDocuments(ctx, []store.DocumentSave{saves[3], saves[0], saves[3], saves[2]})
	if err != nil || twice[0] != nil || twice[1] != nil || twice[2] != nil || twice[3] == nil || string(twice[3].Of) != string(orig) {
		t.Errorf("a document twice in a batch: %+v %v", twice, err)
	}
	var links, keyed int
	if err := s.Pool().QueryRow(ctx, `SELECT (SELECT coalesce(sum(cardinality(link_to)), 0) FROM documents WHERE crawl_id = 'c'),
		(SELECT count(DISTINCT url_hash) FROM dedup_keys)`).Scan(&links, &keyed); err != nil {
		t.Fatal(err)
	}
	if links != 4 || keyed != 3 { // every link once; keys for all but the exact copy
		t.Errorf("%d links, %d documents keyed: want 4 and 3", links, keyed)
	}
}

// A document's near-duplicate keys go with it: deleted with its URL (a cascade to the
// document, whose trigger takes its keys: schema 0018 files them without a foreign key), and
// with its crawl's deletion (which deletes the crawl's keys itself).
func TestDocumentKeysGoWithTheirDocument(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	det, _ := dedup.NewDetector(3, 0.9)
	docs, original, _, other := corpusTrio(t)
	saveText(t, ctx, s, det, "http://a.test/original", docs[original].Text)
	saveText(t, ctx, s, det, "http://a.test/other", docs[other].Text)
	keysOf := func(url string) (n int) {
		t.Helper()
		if err := s.Pool().QueryRow(ctx, `SELECT count(*) FROM dedup_keys WHERE url_hash = $1`,
			cand(url, "a.test", 1).Hash).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	want := len(det.Keys(det.Fingerprint(docs[other].Text)))
	if n := keysOf("http://a.test/original"); n == 0 || keysOf("http://a.test/other") != want {
		t.Fatalf("keys filed: original %d, other %d (want %d)", n, keysOf("http://a.test/other"), want)
	}
	if _, err := s.Pool().Exec(ctx, `DELETE FROM urls WHERE url_hash = $1`, cand("http://a.test/original", "a.test", 1).Hash); err != nil {
		t.Fatal(err)
	}
	if n := keysOf("http://a.test/original"); n != 0 {
		t.Fatalf("%d keys of a deleted document remain", n)
	}
	if n := keysOf("http://a.test/other"); n != want {
		t.Fatalf("deleting one document took another's keys: %d left of %d", n, want)
	}
	if _, err := s.Pool().Exec(ctx, `UPDATE crawls SET state = 'deleting' WHERE id = 'c'`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Deletes().DeleteCrawlRows(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	var left int
	if err := s.Pool().QueryRow(ctx, `SELECT count(*) FROM dedup_keys`).Scan(&left); err != nil || left != 0 {
		t.Fatalf("%d keys remain after their crawl was deleted (%v)", left, err)
	}
}

// A document filed under a SimHash block is a candidate only within the lookup's SimHash
// distance, checked in the index (schema 0045): a block's chance companions are never read.
// Under another key, any document is a candidate. The run's own documents are held to the
// same rule, so a verdict does not depend on how documents were batched.
func TestSimHashBlocksFindOnlyDocumentsWithinTheDistance(t *testing.T) {
	const block, band = int64(7), int64(-99)
	cases := []struct {
		name    string
		simhash int64
		blocks  []int64
		want    bool // the stored document is a candidate
	}{
		{"same block, 3 bits apart", 0b111, []int64{block}, true},
		{"same block, 4 bits apart", 0b1111, []int64{block}, false},
		{"same block, 32 bits apart", 0x0f0f0f0f0f0f0f0f, []int64{block}, false},
		{"same key not a block, 32 bits apart", 0x0f0f0f0f0f0f0f0f, nil, true},
	}
	for _, together := range []bool{false, true} {
		for _, tc := range cases {
			t.Run(fmt.Sprintf("%s, in one batch %v", tc.name, together), func(t *testing.T) {
				s, ctx := newStore(t, 0, 0)
				var seen [][]byte
				save := func(url string, simhash int64, blocks []int64) store.DocumentSave {
					c := cand(url, "a.test", 1)
					if _, err := s.Frontier().Admit(ctx, "c", []store.Candidate{c}, admit.Budget(0), -1); err != nil {
						t.Fatal(err)
					}
					content := sha256.Sum256([]byte(url))
					judge := func(cands []store.NearCandidate) *store.Dup {
						for _, c := range cands {
							seen = append(seen, c.Hash)
						}
						return nil
					}
					return store.DocumentSave{Doc: store.Document{CrawlID: "c", Hash: c.Hash, ContentHash: content[:], BodyKey: "k", Size: 1},
						Near: &store.NearDup{SimHash: simhash, MinHash: []byte{1}, Keys: []int64{block, band}, Blocks: blocks, MaxBits: 3, Judge: judge}}
				}
				// The stored document shares both keys with the looker, but band only by
				// its own key: the looker files band under a different number.
				stored := save("http://a.test/stored", 0, []int64{block})
				stored.Near.Keys = []int64{block, band - 1}
				looker := save("http://a.test/looker", tc.simhash, tc.blocks)
				batches := [][]store.DocumentSave{{stored}, {looker}}
				if together {
					batches = [][]store.DocumentSave{{stored, looker}}
				}
				for _, b := range batches {
					if _, err := s.Documents().SaveDocuments(ctx, b); err != nil {
						t.Fatal(err)
					}
				}
				found := slices.ContainsFunc(seen, func(h []byte) bool { return string(h) == string(stored.Doc.Hash) })
				if found != tc.want {
					t.Errorf("the stored document was a candidate: %v, want %v (candidates %d)", found, tc.want, len(seen))
				}
			})
		}
	}
}

// The index files a key mixed with its document's crawl (schema 0045): a near copy saved in
// another crawl finds nothing there, and deleting that crawl takes its keys and no other's.
func TestNearDuplicateKeysStayInTheirCrawl(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	det, _ := dedup.NewDetector(3, 0.9)
	docs, original, near, _ := corpusTrio(t)
	if _, err := s.Crawls().CreateCrawl(ctx, "d", crawl.Spec{Seeds: []string{"http://a.test/"}}); err != nil {
		t.Fatal(err)
	}
	saveTextIn(t, ctx, s, det, "c", "http://a.test/original", docs[original].Text)
	if dup := saveTextIn(t, ctx, s, det, "d", "http://a.test/near", docs[near].Text); dup != nil {
		t.Fatalf("a near copy in another crawl was judged %+v: want an original there", dup)
	}
	if dup := saveTextIn(t, ctx, s, det, "c", "http://a.test/near", docs[near].Text); dup == nil || dup.Kind == store.DupExact {
		t.Fatalf("the near copy in the original's crawl was judged %+v: want a near duplicate", dup)
	}
	keys := func() (c, d int64) {
		t.Helper()
		rc, err := s.Deletes().CrawlRows(ctx, "c")
		if err != nil {
			t.Fatal(err)
		}
		rd, err := s.Deletes().CrawlRows(ctx, "d")
		if err != nil {
			t.Fatal(err)
		}
		return rc["dedup_keys"], rd["dedup_keys"]
	}
	var all int64
	if err := s.Pool().QueryRow(ctx, `SELECT count(*) FROM dedup_keys`).Scan(&all); err != nil {
		t.Fatal(err)
	}
	c, d := keys()
	if want := int64(len(det.Keys(det.Fingerprint(docs[near].Text)))); d != want || c == 0 || c+d != all {
		t.Fatalf("keys counted: crawl c %d, crawl d %d (want %d), %d in all", c, d, want, all)
	}
	if _, err := s.Pool().Exec(ctx, `UPDATE crawls SET state = 'stopped' WHERE id = 'd'`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Deletes().ReleaseCrawl(ctx, "d"); err != nil {
		t.Fatal(err)
	}
	gone, err := s.Deletes().DeleteCrawlRows(ctx, "d")
	if err != nil {
		t.Fatal(err)
	}
	if left, _ := keys(); gone["dedup_keys"] != d || left != c {
		t.Errorf("deleting crawl d took %d keys (want %d) and left crawl c %d (want %d)", gone["dedup_keys"], d, left, c)
	}
}

// A document saved again files its new text's keys and none of its old ones, found by the
// keys its row holds (schema 0036: dedup_keys has no index by document); saved again as an
// exact duplicate, it files none.
func TestAResavedDocumentRefilesItsKeys(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	det, _ := dedup.NewDetector(3, 0.9)
	docs, original, near, other := corpusTrio(t)
	const url = "http://a.test/changing"
	hash := cand(url, "a.test", 1).Hash
	// rows: what the index holds for the document; onRow: the keys on its row; mixed: those
	// keys mixed with its crawl, as the index files them (schema 0045).
	filed := func() (rows, onRow, mixed []int64) {
		t.Helper()
		if err := s.Pool().QueryRow(ctx, `SELECT coalesce((SELECT array_agg(key ORDER BY key) FROM dedup_keys WHERE url_hash = $1), '{}'),
			coalesce((SELECT array_agg(k ORDER BY k) FROM documents, unnest(dedup_keys) k WHERE url_hash = $1), '{}')`, hash).Scan(&rows, &onRow); err != nil {
			t.Fatal(err)
		}
		if err := s.Pool().QueryRow(ctx, `SELECT coalesce(array_agg(hashtextextended('c', k) ORDER BY hashtextextended('c', k)), '{}')
			FROM unnest($1::bigint[]) k`, onRow).Scan(&mixed); err != nil {
			t.Fatal(err)
		}
		return rows, onRow, mixed
	}
	keysOf := func(text string) []int64 {
		ks := slices.Clone(det.Keys(det.Fingerprint(text)))
		slices.Sort(ks)
		return slices.Compact(ks)
	}
	saveText(t, ctx, s, det, "http://a.test/first", docs[near].Text) // processed first: the original of its text
	saveText(t, ctx, s, det, url, docs[original].Text)
	if rows, onRow, mixed := filed(); !slices.Equal(slices.Compact(onRow), keysOf(docs[original].Text)) || !slices.Equal(rows, mixed) {
		t.Fatalf("first save filed %v (row says %v), want %v", rows, onRow, keysOf(docs[original].Text))
	}
	saveText(t, ctx, s, det, url, docs[other].Text) // the page changed
	if rows, onRow, mixed := filed(); !slices.Equal(slices.Compact(onRow), keysOf(docs[other].Text)) || !slices.Equal(rows, mixed) {
		t.Fatalf("saved changed, it files %v (row says %v), want only the new text's %v", rows, onRow, keysOf(docs[other].Text))
	}
	if dup := saveText(t, ctx, s, det, url, docs[near].Text); dup == nil || dup.Kind != store.DupExact { // now a copy of another document
		t.Fatalf("saved as a copy: %+v", dup)
	}
	if rows, onRow, _ := filed(); len(rows) != 0 || len(onRow) != 0 {
		t.Fatalf("an exact duplicate files no keys: %v (row says %v)", rows, onRow)
	}
	var indexes int
	if err := s.Pool().QueryRow(ctx, `SELECT count(*) FROM pg_indexes WHERE tablename = 'dedup_keys'`).Scan(&indexes); err != nil || indexes != 1 {
		t.Errorf("dedup_keys has %d indexes (%v): want one, by key (mixed with the crawl) and document", indexes, err)
	}
}

// The near-duplicate index is unlogged (schema 0037): a crash or a failover leaves it empty.
// The next save rebuilds it from the keys on the documents' rows, and still finds a near
// duplicate of a document saved before the loss.
func TestTheNearDuplicateIndexIsRebuiltAfterItIsLost(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	det, _ := dedup.NewDetector(3, 0.9)
	docs, original, near, other := corpusTrio(t)
	saveText(t, ctx, s, det, "http://a.test/original", docs[original].Text)
	saveText(t, ctx, s, det, "http://a.test/other", docs[other].Text)
	count := func() (n int) {
		t.Helper()
		if err := s.Pool().QueryRow(ctx, `SELECT count(*) FROM dedup_keys`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := count()
	// What crash recovery or a promoted standby leaves of unlogged tables.
	if _, err := s.Pool().Exec(ctx, `TRUNCATE dedup_keys, dedup_keys_state`); err != nil {
		t.Fatal(err)
	}
	dup := saveText(t, ctx, s, det, "http://a.test/near", docs[near].Text)
	if dup == nil || string(dup.Of) != string(cand("http://a.test/original", "a.test", 1).Hash) {
		t.Fatalf("after the index was lost, the near copy was judged %+v: want a duplicate of the original", dup)
	}
	if after := count(); after < before || before == 0 {
		t.Errorf("%d keys after the rebuild, %d before the loss", after, before)
	}
	var logged string
	if err := s.Pool().QueryRow(ctx, `SELECT relpersistence FROM pg_class WHERE relname = 'dedup_keys'`).Scan(&logged); err != nil || logged != "u" {
		t.Errorf("dedup_keys persistence %q (%v): want unlogged", logged, err)
	}
}

// Exact duplicates are decided before a batch is saved, as the table will be after it: a
// document whose content changes in the batch is no longer the first of its old content, and
// a document saved again keeps its place (when it was first processed) before the batch's new
// ones, wherever the batch names it.
func TestExactDuplicatesAreDecidedAsTheSavedBatchWillBe(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	hash := func(name string) []byte { return cand("http://a.test/"+name, "a.test", 1).Hash }
	doc := func(name, content string) store.DocumentSave {
		c := cand("http://a.test/"+name, "a.test", 1)
		if _, err := s.Frontier().Admit(ctx, "c", []store.Candidate{c}, admit.Budget(0), -1); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256([]byte(content))
		return store.DocumentSave{Doc: store.Document{CrawlID: "c", Hash: c.Hash, ContentHash: sum[:], BodyKey: "k", Size: 1}}
	}
	save := func(saves ...store.DocumentSave) []*store.Dup {
		t.Helper()
		dups, err := s.Documents().SaveDocuments(ctx, saves)
		if err != nil {
			t.Fatal(err)
		}
		return dups
	}
	dupOf := func(name string) string { // what the document's row says
		t.Helper()
		var of []byte
		if err := s.Pool().QueryRow(ctx, `SELECT dup_of FROM documents WHERE crawl_id = 'c' AND url_hash = $1`, hash(name)).Scan(&of); err != nil {
			t.Fatal(err)
		}
		return string(of)
	}
	save(doc("first", "X"))
	if d := save(doc("second", "X")); d[0] == nil || string(d[0].Of) != string(hash("first")) {
		t.Fatalf("second: %+v, want a copy of first", d[0])
	}
	// first changes to Y in the same batch as a new copy of X: second is X's first now.
	d := save(doc("third", "X"), doc("first", "Y"))
	if d[0] == nil || string(d[0].Of) != string(hash("second")) || d[1] != nil {
		t.Errorf("third, first: %+v %+v, want a copy of second and an original", d[0], d[1])
	}
	if dupOf("third") != string(hash("second")) || dupOf("first") != "" {
		t.Errorf("rows: third a copy of %x, first of %x", dupOf("third"), dupOf("first"))
	}
	// A new document named before a saved one of the same new content is its copy: the
	// saved one was processed first.
	d = save(doc("fourth", "Z"), doc("second", "Z"))
	if d[0] == nil || string(d[0].Of) != string(hash("second")) || d[1] != nil {
		t.Errorf("fourth, second: %+v %+v, want a copy of second and an original", d[0], d[1])
	}
	// Two new documents of one content: the batch's first is the original.
	d = save(doc("sixth", "W"), doc("fifth", "W"))
	if d[0] != nil || d[1] == nil || string(d[1].Of) != string(hash("sixth")) {
		t.Errorf("sixth, fifth: %+v %+v, want an original and its copy", d[0], d[1])
	}
	if dupOf("fifth") != string(hash("sixth")) || dupOf("second") != "" {
		t.Errorf("rows: fifth a copy of %x, second of %x", dupOf("fifth"), dupOf("second"))
	}
}

// A page's out-links are kept with its document, one to each target, and found from either
// end: the URL view lists a page's out-links and a target's in-links, requisites left out. A
// page saved again holds the links of its last save.
func TestOutLinksAreKeptWithTheDocumentAndFoundFromEitherEnd(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	var c [4]store.Candidate
	for i, name := range []string{"a", "b", "style.css", "d"} {
		c[i] = cand("http://a.test/"+name, "a.test", 1)
	}
	if _, err := s.Frontier().Admit(ctx, "c", c[:], admit.Budget(0), -1); err != nil {
		t.Fatal(err)
	}
	a, b, css, d := c[0], c[1], c[2], c[3]
	save := func(from store.Candidate, links ...store.Link) {
		t.Helper()
		content := sha256.Sum256(from.Hash)
		if _, err := s.Documents().SaveDocument(ctx, store.Document{CrawlID: "c", Hash: from.Hash, ContentHash: content[:], BodyKey: "k", Size: 1},
			links, nil); err != nil {
			t.Fatal(err)
		}
	}
	save(a, store.Link{From: a.Hash, To: b.Hash}, store.Link{From: a.Hash, To: css.Hash, Kind: "embed"},
		store.Link{From: a.Hash, To: b.Hash, Kind: "embed"}, store.Link{From: a.Hash, To: d.Hash, NoFollow: true})
	save(d, store.Link{From: d.Hash, To: b.Hash, Kind: "iframe"})
	view := func(of store.Candidate) *store.URLRecord {
		t.Helper()
		r, err := s.Inspect().URLRecordOf(ctx, "c", of.Hash)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if got := view(a).OutLinks; !slices.Equal(got, []string{b.URL, d.URL}) {
		t.Errorf("out-links of a: %v; want b and d, once each, the stylesheet left out", got)
	}
	if got := view(b).InLinks; !slices.Equal(got, []string{a.URL, d.URL}) {
		t.Errorf("in-links of b: %v; want a and d", got)
	}
	if got := view(css).InLinks; len(got) != 0 {
		t.Errorf("in-links of the stylesheet: %v; want none (a requisite is not linked)", got)
	}
	var kinds []string
	var nofollow []bool
	if err := s.Pool().QueryRow(ctx, `SELECT link_kind, link_nofollow FROM documents WHERE crawl_id = 'c' AND url_hash = $1`, a.Hash).
		Scan(&kinds, &nofollow); err != nil || !slices.Equal(kinds, []string{"a", "embed", "a"}) || !slices.Equal(nofollow, []bool{false, false, true}) {
		t.Errorf("a's links: kinds %v, nofollow %v, %v; want a, embed, a and only d's nofollow", kinds, nofollow, err)
	}
	save(a, store.Link{From: a.Hash, To: d.Hash})
	if got := view(a).OutLinks; !slices.Equal(got, []string{d.URL}) {
		t.Errorf("out-links of a saved again: %v; want d alone", got)
	}
	if got := view(b).InLinks; !slices.Equal(got, []string{d.URL}) {
		t.Errorf("in-links of b once a dropped its link: %v; want d", got)
	}
}

// No index serves in-links (schema 0047): the URL view reads the crawl's documents for them,
// within a time budget, and says when the budget cut the read short instead of listing what
// it found so far as if it were all.
func TestInLinksAreReadWithinABudgetAndACutIsSaid(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	var indexed bool
	if err := s.Pool().QueryRow(ctx, `SELECT to_regclass('documents_link_to') IS NOT NULL`).Scan(&indexed); err != nil || indexed {
		t.Fatalf("documents_link_to is still there (%v): every saved page pays for it", err)
	}
	target := cand("http://a.test/target", "a.test", 1)
	if _, err := s.Frontier().Admit(ctx, "c", []store.Candidate{target}, admit.Budget(0), -1); err != nil {
		t.Fatal(err)
	}
	// 60,000 pages, the last of which links to the target.
	if _, err := s.Pool().Exec(ctx, `INSERT INTO urls (crawl_id, url_hash, url, host)
			SELECT 'c', substr(sha256(i::text::bytea), 1, 16), 'http://b.test/' || i, 'b.test' FROM generate_series(1, 60000) i`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Pool().Exec(ctx, `INSERT INTO documents (crawl_id, url_hash, content_hash, body_key, size, link_to, link_kind, link_nofollow)
			SELECT 'c', substr(sha256(i::text::bytea), 1, 16), sha256(i::text::bytea), 'k', 1,
				ARRAY[substr(sha256((i + 1)::text::bytea), 1, 16), CASE WHEN i = 60000 THEN $1::bytea ELSE substr(sha256((i + 2)::text::bytea), 1, 16) END],
				ARRAY['a', 'a'], ARRAY[false, false]
			FROM generate_series(1, 60000) i`, target.Hash); err != nil {
		t.Fatal(err)
	}
	r, err := s.Inspect().URLRecordOf(ctx, "c", target.Hash)
	if err != nil || r.InLinksCut || !slices.Equal(r.InLinks, []string{"http://b.test/60000"}) {
		t.Fatalf("in-links of the target: %v (cut %v), %v; want the last page's", r.InLinks, r.InLinksCut, err)
	}
	restore := store.SetInLinksBudget(time.Millisecond)
	defer restore()
	r, err = s.Inspect().URLRecordOf(ctx, "c", target.Hash)
	if err != nil || !r.InLinksCut || len(r.InLinks) != 0 {
		t.Fatalf("in-links read for 1 ms over 60,000 documents: %v (cut %v), %v; want none listed and the cut said", r.InLinks, r.InLinksCut, err)
	}
}

// Migration 0040 moves each page's rows of the links table onto its document, kinds and
// nofollow beside their targets, and leaves a document without links without arrays.
func TestMigration0040MovesLinksOntoDocuments(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	var c [3]store.Candidate
	for i, name := range []string{"a", "b", "c"} {
		c[i] = cand("http://a.test/"+name, "a.test", 1)
		content := sha256.Sum256(c[i].Hash)
		if _, err := s.Frontier().Admit(ctx, "c", []store.Candidate{c[i]}, admit.Budget(0), -1); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Documents().SaveDocument(ctx, store.Document{CrawlID: "c", Hash: c[i].Hash, ContentHash: content[:], BodyKey: "k", Size: 1}, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	// The table as migrations 0001 and 0024 left it, with a page's links in it.
	if _, err := s.Pool().Exec(ctx, `CREATE TABLE links (crawl_id text NOT NULL, from_hash bytea NOT NULL, to_hash bytea NOT NULL,
			nofollow boolean NOT NULL DEFAULT false, kind text NOT NULL DEFAULT 'a', PRIMARY KEY (crawl_id, from_hash, to_hash));
		CREATE INDEX links_to ON links (crawl_id, to_hash)`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Pool().Exec(ctx, `INSERT INTO links (crawl_id, from_hash, to_hash, nofollow, kind) VALUES ('c', $1, $2, true, 'a'), ('c', $1, $3, false, 'embed'),
		('c', $2, $1, false, 'iframe')`, c[0].Hash, c[1].Hash, c[2].Hash); err != nil {
		t.Fatal(err)
	}
	applyMigrationAgain(t, ctx, s.Pool(), 40)
	want := map[string][2]int{c[0].URL: {2, 1}, c[1].URL: {1, 0}, c[2].URL: {0, 0}} // links, nofollow
	for _, p := range c {
		var to [][]byte
		var kinds []string
		var nofollow []bool
		if err := s.Pool().QueryRow(ctx, `SELECT link_to, link_kind, link_nofollow FROM documents WHERE crawl_id = 'c' AND url_hash = $1`, p.Hash).
			Scan(&to, &kinds, &nofollow); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, nf := range nofollow {
			if nf {
				n++
			}
		}
		if len(to) != want[p.URL][0] || len(kinds) != len(to) || len(nofollow) != len(to) || n != want[p.URL][1] {
			t.Errorf("%s: %d targets, kinds %v, nofollow %v; want %v", p.URL, len(to), kinds, nofollow, want[p.URL])
		}
	}
	if r, err := s.Inspect().URLRecordOf(ctx, "c", c[1].Hash); err != nil || !slices.Equal(r.InLinks, []string{c[0].URL}) ||
		!slices.Equal(r.OutLinks, []string{c[0].URL}) {
		t.Errorf("b after the migration: %+v, %v; want a as its in-link and its out-link", r, err)
	}
	var left bool
	if err := s.Pool().QueryRow(ctx, `SELECT to_regclass('links') IS NOT NULL`).Scan(&left); err != nil || left {
		t.Errorf("the links table is still there: %v", err)
	}
}
