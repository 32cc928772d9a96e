package e2e

import (
	"context"
	"crypto/sha256"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/segment"
	"github.com/trawlerdev/trawler/internal/testweb"
	"github.com/trawlerdev/trawler/internal/warc"
)

// A second crawl of an unchanged web, deduplicating against the first, stores no body: every
// 200 points at the first crawl's bytes and is written to WARC as a revisit of its first
// capture, and what it points at reads back as the same bytes. Then `trawler delete` removes
// the first crawl but the bodies the second points at, and the second with those: no object or
// row of either is left.
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
	if err := s.store.Pool().QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE body_key LIKE 'segments/bodies/crawl=first/%')
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
	checkDelete(t, s, pages)
}

// checkDelete deletes the crawls "first" and "second" of TestASecondCrawlOfAnUnchangedWebStoresNoNewBodies
// with the CLI: a dry run deletes nothing, a running crawl is refused, the first crawl's
// delete keeps the body segments the second points at, and once both are gone nothing is left.
func checkDelete(t *testing.T, s *stack, pages int) {
	ctx := context.Background()
	bin := buildBinary(t, "trawler", "./starter")
	trawler := func(wantOK bool, args ...string) string {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(s.env(), "DATABASE_URL="+s.cfg.DatabaseURL, "TRAWLER_S3_BUCKET="+s.cfg.S3Bucket)
		out, err := cmd.CombinedOutput()
		if (err == nil) != wantOK {
			t.Fatalf("trawler %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	all := func() []string {
		keys, err := s.blob.List(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		return keys
	}
	rowsOf := func(crawlID string) map[string]int64 {
		rows, err := s.store.Deletes().CrawlRows(ctx, crawlID)
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}
	before := all()
	dry := trawler(true, "delete", "--crawl", "first", "--dry-run")
	if !strings.Contains(dry, "would delete object warc/first/") || !strings.Contains(dry, "kept object segments/bodies/crawl=first/") {
		t.Errorf("the dry run says:\n%s\nwant the first crawl's WARC files to go and its bodies to stay", dry)
	}
	if after := all(); len(after) != len(before) || len(rowsOf("first")) == 0 {
		t.Fatalf("the dry run deleted something: %d objects before, %d after", len(before), len(after))
	}
	if _, err := s.store.Crawls().CreateCrawl(ctx, "live", crawl.Spec{Name: "live", Seeds: []string{"http://a.test/"}}.WithDefaults()); err != nil {
		t.Fatal(err)
	}
	if out := trawler(false, "delete", "--crawl", "live"); !strings.Contains(out, "stop it first") {
		t.Errorf("deleting a running crawl said %q; want a refusal", out)
	}

	trawler(true, "delete", "--crawl", "first")
	if rows := rowsOf("first"); len(rows) != 0 {
		t.Errorf("rows of the deleted crawl are left: %v", rows)
	}
	for _, k := range all() {
		if strings.HasPrefix(k, "warc/first/") || strings.HasPrefix(k, "segments/text/crawl=first/") {
			t.Errorf("object %s of the deleted crawl is left", k)
		}
	}
	// The second crawl still reads every body it points at.
	rows, err := s.store.Pool().Query(ctx, `SELECT body_key FROM fetches WHERE crawl_id = 'second' AND status = 200`)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(keys) != pages {
		t.Fatalf("%d body keys (%v); want %d", len(keys), err, pages)
	}
	reader := segment.NewReader(s.blob, 64<<20)
	for _, k := range keys {
		if _, err := reader.Get(ctx, k, 64<<20); err != nil {
			t.Errorf("after the first crawl's delete, the second cannot read %s: %v", k, err)
		}
	}
	checkSelfContained(t, s, trawler)

	trawler(true, "delete", "--crawl", "second")
	if rows := rowsOf("second"); len(rows) != 0 {
		t.Errorf("rows of the deleted crawl are left: %v", rows)
	}
	for _, k := range all() {
		if strings.Contains(k, "first/") || strings.Contains(k, "second/") {
			t.Errorf("object %s of a deleted crawl is left", k)
		}
	}
	if out := trawler(false, "delete", "--crawl", "second"); !strings.Contains(out, "no such crawl") {
		t.Errorf("deleting a deleted crawl said %q; want no such crawl", out)
	}
}

func sha256sum(b []byte) []byte {
	h := sha256.Sum256(b)
	return h[:]
}
