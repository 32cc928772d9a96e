package store_test

import (
	"context"
	"crypto/sha256"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/admit"
	"github.com/trawlerdev/trawler/internal/store"
)

// saveDoc stores a document of url with content, committed.
func saveDoc(t *testing.T, ctx context.Context, s *store.Store, url, content string) []byte {
	t.Helper()
	c := cand(url, "a.test", 1)
	if _, err := s.Frontier().Admit(ctx, "c", []store.Candidate{c}, admit.Budget(0), -1); err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256([]byte(content))
	if _, err := s.Documents().SaveDocuments(ctx, []store.DocumentSave{{Doc: store.Document{CrawlID: "c", Hash: c.Hash,
		ContentHash: h[:], BodyKey: "k", Size: int64(len(content)), Title: url, Deliver: true}}}); err != nil {
		t.Fatal(err)
	}
	return c.Hash
}

func urlsOf(pages []store.DeliveredPage) []string {
	var out []string
	for _, p := range pages {
		out = append(out, p.URL)
	}
	return out
}

// An output's cursor never passes a save still in flight: a document saved by a transaction
// that began earlier but commits later is read before the cursor moves past it; a save that
// changes nothing keeps its place, one that changes the page moves it to the end; the cursor
// moves only from where it stood; a dead-lettered batch is its range, read again on replay.
func TestDeliveriesReadDocumentsInCommitOrder(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	d := s.Deliveries()
	a := cand("http://a.test/slow", "a.test", 1)
	if _, err := s.Frontier().Admit(ctx, "c", []store.Candidate{a}, admit.Budget(0), -1); err != nil {
		t.Fatal(err)
	}
	// A save that takes its transaction ID first and commits last.
	tx, err := s.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `INSERT INTO documents (crawl_id, url_hash, content_hash, body_key, size) VALUES ('c', $1, '\x01', 'k', 1)`, a.Hash); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO delivery_queue SELECT crawl_id, stored_tx, url_hash FROM documents WHERE url_hash = $1`, a.Hash); err != nil {
		t.Fatal(err)
	}
	saveDoc(t, ctx, s, "http://a.test/fast", "fast")

	start, _, err := d.Position(ctx, "c", "hook")
	if err != nil {
		t.Fatal(err)
	}
	if pages, err := d.Pages(ctx, "c", start, nil, 10); err != nil || len(pages) != 0 {
		t.Fatalf("with an earlier save in flight, read %v (%v): the cursor would pass it", urlsOf(pages), err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	pages, err := d.Pages(ctx, "c", start, nil, 10)
	if err != nil || len(pages) != 2 || pages[0].URL != "http://a.test/slow" || pages[1].URL != "http://a.test/fast" {
		t.Fatalf("after the commit: %v (%v), want slow then fast", urlsOf(pages), err)
	}
	if pages[1].Title != "http://a.test/fast" {
		t.Errorf("record fields not read: %+v", pages[1].StoredPage)
	}

	// The cursor moves from where it stands only.
	if ok, err := d.Advance(ctx, "c", "hook", start, pages[0].At, 1); err != nil || !ok {
		t.Fatalf("advance: %v %v", ok, err)
	}
	if ok, _ := d.Advance(ctx, "c", "hook", start, pages[1].At, 1); ok {
		t.Error("a stale attempt moved the cursor")
	}
	at, _, _ := d.Position(ctx, "c", "hook")
	if !at.Same(pages[0].At) {
		t.Fatalf("cursor at %+v, want %+v", at, pages[0].At)
	}

	// The same content saved again keeps its place; changed content moves to the end.
	saveDoc(t, ctx, s, "http://a.test/fast", "fast")
	saveDoc(t, ctx, s, "http://a.test/third", "third")
	if next, _ := d.Pages(ctx, "c", at, nil, 10); len(next) != 2 || next[0].URL != "http://a.test/fast" || !next[0].At.Same(pages[1].At) {
		t.Fatalf("after an unchanged save: %v", urlsOf(next))
	}
	saveDoc(t, ctx, s, "http://a.test/fast", "fast, changed")
	next, _ := d.Pages(ctx, "c", at, nil, 10)
	if len(next) != 2 || next[0].URL != "http://a.test/third" || next[1].URL != "http://a.test/fast" {
		t.Fatalf("after a changed save: %v, want third then fast", urlsOf(next))
	}

	// Dead-letter both; the range reads them again; replay takes them off the dead count.
	if err := d.DeadLetter(ctx, "c", "hook", store.DeadBatch{From: at, To: next[1].At, Records: 2, Attempts: 12, Error: "500"}); err != nil {
		t.Fatal(err)
	}
	if err := d.DeadLetter(ctx, "c", "hook", store.DeadBatch{From: at, To: next[1].At, Records: 2, Attempts: 12, Error: "500"}); err != nil {
		t.Fatal(err) // a retry records it once
	}
	dead, err := d.DeadBatches(ctx, "c", "hook", 10)
	if err != nil || len(dead) != 1 || dead[0].Records != 2 {
		t.Fatalf("dead batches: %+v (%v)", dead, err)
	}
	again, _ := d.Pages(ctx, "c", dead[0].From, &dead[0].To, 10)
	if len(again) != 2 {
		t.Fatalf("the dead batch's range reads %v", urlsOf(again))
	}
	if at, _, _ := d.Position(ctx, "c", "hook"); !at.Same(next[1].At) {
		t.Error("dead-lettering did not move the cursor past the batch")
	}
	st, err := d.Statuses(ctx, "c")
	if err != nil || len(st) != 1 || st[0].Dead != 2 || st[0].DeadBatches != 1 || st[0].Records != 1 || st[0].Behind != 0 || st[0].LastError != "500" {
		t.Fatalf("status: %+v (%v)", st, err)
	}
	if err := d.Replayed(ctx, "c", "hook", dead[0].ID); err != nil {
		t.Fatal(err)
	}
	if st, _ := d.Statuses(ctx, "c"); st[0].Dead != 0 || st[0].DeadBatches != 0 {
		t.Errorf("after replay: %+v", st)
	}
	if _, _, err := d.Position(ctx, "nope", "hook"); err != store.ErrNoCrawl {
		t.Errorf("a missing crawl's position: %v", err)
	}

	// A batch's failed tries are counted while the cursor stands, and start again past it.
	at, _, _ = d.Position(ctx, "c", "hook")
	saveDoc(t, ctx, s, "http://a.test/fourth", "fourth")
	for want := 1; want <= 2; want++ {
		if n, err := d.Failed(ctx, "c", "hook", at, "503"); err != nil || n != want {
			t.Fatalf("failed try %d counted %d (%v)", want, n, err)
		}
	}
	if n, _ := d.Failed(ctx, "c", "hook", store.Cursor{Tx: "1"}, "503"); n != 0 {
		t.Error("a stale try was counted")
	}
	four, _ := d.Pages(ctx, "c", at, nil, 10)
	if len(four) != 1 {
		t.Fatalf("after the cursor: %v", urlsOf(four))
	}
	// The output ends once the crawl did and nothing is after its cursor.
	if ended, err := d.Ended(ctx, "c", at, 0); err != nil || ended {
		t.Errorf("a running crawl ended: %v %v", ended, err)
	}
	if err := s.Crawls().SetCrawlState(ctx, "c", "done"); err != nil {
		t.Fatal(err)
	}
	if ended, _ := d.Ended(ctx, "c", at, 0); ended {
		t.Error("ended with a document after the cursor")
	}
	d.Advance(ctx, "c", "hook", at, four[0].At, 1)
	if err := s.Crawls().SetCrawlState(ctx, "c", "stopped"); err != nil {
		t.Fatal(err)
	}
	if ended, _ := d.Ended(ctx, "c", four[0].At, time.Hour); ended {
		t.Error("a stopped crawl ended before its last requests could land")
	}
	if ended, err := d.Ended(ctx, "c", four[0].At, 0); err != nil || !ended {
		t.Errorf("a done crawl delivered to its last document has not ended: %v", err)
	}
	if _, tries, _ := d.Position(ctx, "c", "hook"); tries != 0 {
		t.Errorf("tries %d after the cursor moved", tries)
	}
}

// A crawl without outputs queues nothing for delivery: the queue costs only the crawls that
// deliver.
func TestDocumentsOfCrawlsWithoutOutputsAreNotQueued(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	c := cand("http://a.test/x", "a.test", 1)
	if _, err := s.Frontier().Admit(ctx, "c", []store.Candidate{c}, admit.Budget(0), -1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Documents().SaveDocuments(ctx, []store.DocumentSave{{Doc: store.Document{CrawlID: "c", Hash: c.Hash,
		ContentHash: []byte{1}, BodyKey: "k", Size: 1}}}); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := s.Pool().QueryRow(ctx, `SELECT count(*) FROM delivery_queue`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d queued (%v)", n, err)
	}
}
