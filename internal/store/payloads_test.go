package store_test

import (
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/store"
	"github.com/trawlerdev/trawler/internal/testenv"
)

// A payload is found in the crawl itself, in a crawl it names, or with "*" in any; the crawl's
// own copy comes first; a payload found in another crawl is filed under the finder, which
// keeps the owner's segment when the owner is deleted and lets it go with the finder.
func TestPayloadsAreFoundWhereTheSpecSaysAndFiled(t *testing.T) {
	pool, _ := testenv.Postgres(t)
	s := store.New(pool)
	ctx := t.Context()
	for _, id := range []string{"a", "b", "c"} {
		if _, err := s.Crawls().CreateCrawl(ctx, id, crawl.Spec{Name: id, Seeds: []string{"http://a.test/"}}.WithDefaults()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := pool.Exec(ctx, `UPDATE crawls SET state = 'done', finished_at = now()`); err != nil {
		t.Fatal(err)
	}
	hash := []byte("0123456789abcdef0123456789abcdef")
	at := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	if _, err := pool.Exec(ctx, `INSERT INTO payloads (content_hash, crawl_id, owner_crawl, body_key, url, fetched_at)
		VALUES ($1, 'a', 'a', 'segments/bodies/crawl=a/x.gz#0+10', 'http://a.test/', $2)`, hash, at); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.Documents().FindPayload(ctx, "b", []string{"c"}, hash); err != nil || ok {
		t.Fatalf("found in a crawl not named: %v %v", ok, err)
	}
	p, ok, err := s.Documents().FindPayload(ctx, "b", []string{"*"}, hash)
	if err != nil || !ok || p.OwnerCrawl != "a" || p.BodyKey != "segments/bodies/crawl=a/x.gz#0+10" || p.URL != "http://a.test/" || !p.FetchedAt.Equal(at) {
		t.Fatalf("store-wide: %+v %v %v", p, ok, err)
	}
	if p, ok, _ := s.Documents().FindPayload(ctx, "b", nil, hash); !ok || p.OwnerCrawl != "a" {
		t.Errorf("b's own filed row is not found again: %+v", p)
	}
	shared, err := s.Deletes().SharedBodies(ctx, "a")
	if err != nil || len(shared) != 1 {
		t.Errorf("a's shared bodies %v %v; want the one b points at", shared, err)
	}
	borrowed, err := s.Documents().BorrowedFrom(ctx, "b")
	if err != nil || len(borrowed) != 1 || borrowed[0].Crawl != "a" || borrowed[0].Bodies != 1 || borrowed[0].Gone {
		t.Errorf("b borrowed %v %v", borrowed, err)
	}
	// a is deleted: its segment stays (b points there) until b goes, whose delete notes it.
	if shared, err := s.Deletes().ReleaseCrawl(ctx, "a"); err != nil || len(shared) != 1 {
		t.Fatalf("release a: %v %v", shared, err)
	}
	if _, err := s.Deletes().DeleteCrawlRows(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if borrowed, err := s.Documents().BorrowedFrom(ctx, "b"); err != nil || len(borrowed) != 1 || !borrowed[0].Gone {
		t.Errorf("after a's delete, b borrowed %v %v; want a, gone", borrowed, err)
	}
	if orphaned, err := s.Deletes().OrphanedBodies(ctx, "b"); err != nil || len(orphaned) != 1 {
		t.Errorf("b's orphaned bodies %v %v; want a's segment", orphaned, err)
	}
	if _, err := s.Deletes().ReleaseCrawl(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	if pending, err := s.Deletes().PendingObjectDeletes(ctx, "b"); err != nil || len(pending) != 1 || pending[0] != "segments/bodies/crawl=a/x.gz" {
		t.Errorf("pending deletes %v %v; want a's segment", pending, err)
	}
	if _, err := s.Deletes().ReleaseCrawl(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Documents().FindPayload(ctx, "c", []string{"*"}, hash); err != nil {
		t.Errorf("a finder of a crawl being deleted: %v", err)
	}
	live := crawl.Spec{Name: "live", Seeds: []string{"http://a.test/"}}.WithDefaults()
	if _, err := s.Crawls().CreateCrawl(ctx, "live", live); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Deletes().ReleaseCrawl(ctx, "live"); err == nil {
		t.Error("a running crawl was released for deletion")
	}
}
