package store_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/admit"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/store"
)

// Archiving captures files where their records sit in rows of their own (schema 0046): the
// captures' fetches rows are not rewritten, the captures wait for the archiver no more, a file
// saved again after a retry moves them, and a crawl's deletion counts and takes them all.
func TestArchivingCapturesPlacesThemAndLeavesTheirRowsAlone(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	var cands []store.Candidate
	for i := 0; i < 3; i++ {
		cands = append(cands, cand(fmt.Sprintf("http://a.test/%d", i), "a.test", 1))
	}
	if _, err := s.Frontier().Admit(ctx, "c", cands, admit.Budget(0), -1); err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(-time.Minute).Truncate(time.Millisecond)
	record := func(i int, key string, status int, errText string, when time.Time) {
		t.Helper()
		o := store.FetchOutcome{CrawlID: "c", Hash: cands[i].Hash, URL: cands[i].URL, FetchKey: key, FetchedAt: when,
			Status: status, Err: errText, Bytes: 100, State: crawl.URLFetched, Duration: time.Millisecond}
		if status == 200 {
			o.ContentType, o.BodyKey, o.ContentHash = "text/html", "bodies/x#0+100", cands[i].Hash
		}
		if ok, err := s.Fetches().RecordFetch(ctx, "a.test", o); err != nil || !ok {
			t.Fatalf("record %s: %v %v", key, ok, err)
		}
	}
	record(0, "k0", 200, "", at)
	record(1, "k1", 404, "", at.Add(time.Second))
	record(2, "k2", 0, "dial tcp: refused", at.Add(2*time.Second)) // no answer: nothing to archive

	caps, err := s.Archive().Unarchived(ctx, "c", 0, 10)
	if err != nil || len(caps) != 2 || caps[0].URL != cands[0].URL || caps[1].URL != cands[1].URL || caps[0].ID >= caps[1].ID {
		t.Fatalf("unarchived: %+v %v; want the 200 and the 404, in fetch order", caps, err)
	}
	if later, err := s.Archive().Unarchived(ctx, "c", caps[0].ID, 10); err != nil || len(later) != 1 || later[0].ID != caps[1].ID {
		t.Errorf("unarchived after the first: %+v %v", later, err)
	}
	oldest, waiting, err := s.Archive().OldestUnarchived(ctx, "c")
	if err != nil || !oldest.Equal(at) || waiting != 200 {
		t.Errorf("oldest unarchived %v (%d bytes) %v; want %v and 200", oldest, waiting, err, at)
	}
	rowOf := func(id int64) string {
		var v string
		if err := s.Pool().QueryRow(ctx, `SELECT ctid::text || '/' || xmin::text FROM fetches WHERE id = $1`, id).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	before := []string{rowOf(caps[0].ID), rowOf(caps[1].ID)}
	file := func(name string) store.WARCFile {
		return store.WARCFile{CrawlID: "c", Name: name, CDXKey: name + ".cdxj", Records: 4, Bytes: 90,
			FirstID: caps[0].ID, LastID: caps[1].ID, Placed: []store.Placed{{ID: caps[0].ID, Offset: 0, Length: 50}, {ID: caps[1].ID, Offset: 50, Length: 40}}}
	}
	if err := s.Archive().SaveWARCFile(ctx, file("warc/c/one.warc.gz")); err != nil {
		t.Fatal(err)
	}
	if after := []string{rowOf(caps[0].ID), rowOf(caps[1].ID)}; after[0] != before[0] || after[1] != before[1] {
		t.Errorf("the captures' rows were rewritten: %v, then %v", before, after)
	}
	if left, err := s.Archive().Unarchived(ctx, "c", 0, 10); err != nil || len(left) != 0 {
		t.Errorf("still unarchived: %+v %v", left, err)
	}
	if oldest, waiting, err := s.Archive().OldestUnarchived(ctx, "c"); err != nil || !oldest.IsZero() || waiting != 0 {
		t.Errorf("oldest unarchived %v (%d bytes) %v; want none", oldest, waiting, err)
	}
	locs, err := s.Archive().CapturesOf(ctx, "c", cands[1].Hash)
	if err != nil || len(locs) != 1 || locs[0].File != "warc/c/one.warc.gz" || locs[0].Offset != 50 || locs[0].Length != 40 || locs[0].Status != 404 {
		t.Errorf("captures of %s: %+v %v", cands[1].URL, locs, err)
	}
	if r, err := s.Inspect().URLRecordOf(ctx, "c", cands[0].Hash); err != nil || len(r.Fetches) != 1 || r.Fetches[0].WARCFile != "warc/c/one.warc.gz" {
		t.Errorf("the URL view of %s: %+v %v; want its capture's WARC file", cands[0].URL, r, err)
	}
	if a, ok, err := s.Archive().LastAnswer(ctx, "c", cands[0].Hash); err != nil || !ok || a.Status != 200 {
		t.Errorf("last archived answer of %s: %+v %v %v", cands[0].URL, a, ok, err)
	}
	if _, ok, err := s.Archive().LastAnswer(ctx, "c", cands[2].Hash); err != nil || ok {
		t.Errorf("an unanswered fetch has an archived answer: %v %v", ok, err)
	}

	// The archiver's retry writes the file again under another name: the placements move.
	if err := s.Archive().SaveWARCFile(ctx, file("warc/c/two.warc.gz")); err != nil {
		t.Fatal(err)
	}
	if locs, err := s.Archive().CapturesOf(ctx, "c", cands[0].Hash); err != nil || len(locs) != 1 || locs[0].File != "warc/c/two.warc.gz" {
		t.Errorf("after the retry, captures of %s: %+v %v", cands[0].URL, locs, err)
	}

	// A later capture waits alone.
	if _, err := s.Pool().Exec(ctx, `UPDATE urls SET state = 'queued' WHERE crawl_id = 'c' AND url_hash = $1`, cands[0].Hash); err != nil {
		t.Fatal(err)
	}
	record(0, "k0-again", 200, "", at.Add(time.Hour))
	if left, err := s.Archive().Unarchived(ctx, "c", 0, 10); err != nil || len(left) != 1 || left[0].FetchKey != "k0-again" {
		t.Errorf("unarchived after a recrawl: %+v %v", left, err)
	}

	rows, err := s.Deletes().CrawlRows(ctx, "c")
	if err != nil || rows["warc_placements"] != 2 || rows["warc_pending"] != 1 || rows["fetches"] != 4 {
		t.Errorf("the crawl's rows: %v %v; want 2 placements, 1 waiting capture, 4 fetches", rows, err)
	}
	if _, err := s.Pool().Exec(ctx, `UPDATE crawls SET state = 'deleting' WHERE id = 'c'`); err != nil {
		t.Fatal(err)
	}
	// Released for deletion, the crawl takes no more placements, not even a retried save's
	// (whose file row exists, so no foreign-key check locks the crawl): a placement saved
	// between the deletion's delete of placements and its delete of fetches would outlive them.
	pending, err := s.Archive().Unarchived(ctx, "c", 0, 1)
	if err != nil || len(pending) != 1 {
		t.Fatalf("unarchived: %+v %v", pending, err)
	}
	late := file("warc/c/two.warc.gz")
	late.Placed = []store.Placed{{ID: pending[0].ID, Offset: 0, Length: 10}}
	if err := s.Archive().SaveWARCFile(ctx, late); !errors.Is(err, store.ErrNoCrawl) {
		t.Errorf("a save into a crawl being deleted: %v, want ErrNoCrawl", err)
	}
	if rows, err := s.Deletes().CrawlRows(ctx, "c"); err != nil || rows["warc_placements"] != 2 || rows["warc_pending"] != 1 {
		t.Errorf("after a refused save, the crawl's rows: %v %v; want 2 placements, 1 waiting capture", rows, err)
	}
	if _, err := s.Deletes().DeleteCrawlRows(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	var placed, stillWaiting int
	if err := s.Pool().QueryRow(ctx, `SELECT (SELECT count(*) FROM warc_placements), (SELECT count(*) FROM warc_pending)`).Scan(&placed, &stillWaiting); err != nil {
		t.Fatal(err)
	}
	if placed != 0 || stillWaiting != 0 {
		t.Errorf("after the crawl's deletion: %d placements, %d waiting captures", placed, stillWaiting)
	}
}

// Migration 0046 copies each archived capture's place out of fetches into warc_placements,
// lists the rest of the captures (those with an HTTP status) in warc_pending, and drops the
// columns: a capture recorded after it waits through the trigger.
func TestMigration0046MovesPlacementsOutOfFetches(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	var cands []store.Candidate
	for i := 0; i < 4; i++ {
		cands = append(cands, cand(fmt.Sprintf("http://a.test/%d", i), "a.test", 1))
	}
	if _, err := s.Frontier().Admit(ctx, "c", cands, admit.Budget(0), -1); err != nil {
		t.Fatal(err)
	}
	record := func(i, status int) {
		t.Helper()
		o := store.FetchOutcome{CrawlID: "c", Hash: cands[i].Hash, URL: cands[i].URL, FetchKey: fmt.Sprintf("k%d", i), FetchedAt: time.Now(),
			Status: status, State: crawl.URLFetched, Duration: time.Millisecond}
		if status == 0 {
			o.Err = "dial tcp: refused"
		}
		if ok, err := s.Fetches().RecordFetch(ctx, "a.test", o); err != nil || !ok {
			t.Fatalf("record %d: %v %v", i, ok, err)
		}
	}
	record(0, 200)
	record(1, 404)
	record(2, 0)
	// The tables as migrations 0007 left them: the first capture archived, the second not.
	if _, err := s.Pool().Exec(ctx, `DROP TRIGGER fetches_warc_pending ON fetches; DROP FUNCTION warc_pending_inserted();
		DROP TABLE warc_placements, warc_pending;
		ALTER TABLE fetches ADD COLUMN warc_file text, ADD COLUMN warc_offset bigint, ADD COLUMN warc_length bigint;
		CREATE INDEX fetches_unarchived ON fetches (crawl_id, id) WHERE warc_file IS NULL AND status IS NOT NULL;
		UPDATE fetches SET warc_file = 'warc/c/old.warc.gz', warc_offset = 10, warc_length = 20 WHERE fetch_key = 'k0'`); err != nil {
		t.Fatal(err)
	}
	applyMigrationAgain(t, ctx, s.Pool(), 46)
	if locs, err := s.Archive().CapturesOf(ctx, "c", cands[0].Hash); err != nil || len(locs) != 1 ||
		locs[0].File != "warc/c/old.warc.gz" || locs[0].Offset != 10 || locs[0].Length != 20 {
		t.Errorf("the archived capture after the migration: %+v %v", locs, err)
	}
	waiting := func() []string {
		t.Helper()
		caps, err := s.Archive().Unarchived(ctx, "c", 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, c := range caps {
			keys = append(keys, c.FetchKey)
		}
		return keys
	}
	if got := waiting(); !slices.Equal(got, []string{"k1"}) {
		t.Errorf("waiting after the migration: %v; want the 404 alone", got)
	}
	var left int
	if err := s.Pool().QueryRow(ctx, `SELECT count(*) FROM information_schema.columns
		WHERE table_name = 'fetches' AND column_name LIKE 'warc%'`).Scan(&left); err != nil || left != 0 {
		t.Errorf("%d warc columns left on fetches (%v)", left, err)
	}
	record(3, 200)
	if got := waiting(); !slices.Equal(got, []string{"k1", "k3"}) {
		t.Errorf("waiting after a new capture: %v; want the 404 and the new one", got)
	}
}
