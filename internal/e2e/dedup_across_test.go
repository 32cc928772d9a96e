package e2e

import (
	"context"
	"crypto/sha256"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/segment"
	"github.com/trawlerdev/trawler/internal/testweb"
	"github.com/trawlerdev/trawler/internal/warc"
)

// A second crawl of an unchanged web, deduplicating against the first, stores no body: every
// 200 points at the first crawl's bytes and is written to WARC as a revisit of its first
// capture, and what it points at reads back as the same bytes.
func TestASecondCrawlOfAnUnchangedWebStoresNoNewBodies(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.Pages, wc.Specials = 2, 8, false
	s := newStack(t, wc)
	ctx := context.Background()
	spec := func(name string) crawl.Spec {
		return crawl.Spec{Name: name, Seeds: s.web.Seeds(), Scope: crawl.ScopeAny, Delay: crawl.Duration(20 * time.Millisecond),
			ProgressInterval: crawl.Duration(time.Second)}
	}
	if p := s.crawl(spec("first"), 3*time.Minute); p.State != "done" {
		t.Fatalf("first crawl: %+v", p)
	}
	firstBodies, err := s.blob.List(ctx, segment.GroupPrefix("segments/bodies", "first"))
	if err != nil || len(firstBodies) == 0 {
		t.Fatalf("the first crawl's body segments: %v, %v", firstBodies, err)
	}
	second := spec("second")
	second.DedupAgainst = []string{"first"}
	if p := s.crawl(second, 3*time.Minute); p.State != "done" {
		t.Fatalf("second crawl: %+v", p)
	}
	if keys, err := s.blob.List(ctx, segment.GroupPrefix("segments/bodies", "second")); err != nil || len(keys) != 0 {
		t.Errorf("the second crawl stored body segments %v (%v); want none: every body was stored by the first", keys, err)
	}
	var pages, borrowed int
	if err := s.store.Pool().QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE body_key LIKE 'segments/bodies/first/%')
		FROM fetches WHERE crawl_id = 'second' AND status = 200`).Scan(&pages, &borrowed); err != nil {
		t.Fatal(err)
	}
	if pages == 0 || borrowed != pages {
		t.Errorf("%d of the second crawl's %d pages point at the first crawl's bodies; want all", borrowed, pages)
	}
	// The bytes pointed at are the page's: its digest and the stored body agree.
	rows, err := s.store.Pool().Query(ctx, `SELECT body_key, content_hash FROM fetches WHERE crawl_id = 'second' AND status = 200 LIMIT 5`)
	if err != nil {
		t.Fatal(err)
	}
	reader := segment.NewReader(s.blob, 64<<20)
	for rows.Next() {
		var key string
		var hash []byte
		if err := rows.Scan(&key, &hash); err != nil {
			t.Fatal(err)
		}
		body, err := reader.Get(ctx, key, 64<<20)
		if err != nil {
			t.Fatalf("read %s: %v", key, err)
		}
		if got := warc.DigestOf(sha256sum(body)); got != warc.DigestOf(hash) {
			t.Errorf("%s holds bytes of digest %s; the fetch says %s", key, got, warc.DigestOf(hash))
		}
	}
	rows.Close()
	responses, revisits := checkWARC(t, s, "second")
	var redirects, answers int
	if err := s.store.Pool().QueryRow(ctx, `SELECT count(*) FILTER (WHERE status <> 200), count(*) FROM fetches
		WHERE crawl_id = 'second' AND status IS NOT NULL`).Scan(&redirects, &answers); err != nil {
		t.Fatal(err)
	}
	if revisits != pages || responses != answers-pages {
		t.Errorf("the second crawl's WARC holds %d responses and %d revisits; want %d revisits (its 200s) and %d responses (its other answers)",
			responses, revisits, pages, answers-pages)
	}
	t.Logf("first crawl: %d body segments; second: %d pages, all revisits, 0 bodies stored", len(firstBodies), pages)
}

func sha256sum(b []byte) []byte {
	h := sha256.Sum256(b)
	return h[:]
}
