package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/segment"
	"github.com/trawlerdev/trawler/internal/testenv"
	"github.com/trawlerdev/trawler/internal/testweb"
	"github.com/trawlerdev/trawler/internal/warc"
)

// checkWARC reads every WARC file of a finished crawl with warcio.js and checks that each
// capture (a fetch that got an HTTP answer, or an answer the browser was given while it
// rendered a page) has exactly one response or revisit record there
// with its request beside it, that payload digests hold, and that every CDXJ line's offset and
// length cut out the record it names.
func checkWARC(t *testing.T, s *stack, crawlID string) (responses, revisits int) {
	t.Helper()
	ctx := context.Background()
	files, err := s.store.Archive().WARCFiles(ctx, crawlID)
	if err != nil || len(files) == 0 {
		t.Fatalf("WARC files of %s: %v %v", crawlID, files, err)
	}
	recs, data := warcRecords(t, s, crawlID)
	type key struct{ uri, date string }
	captured := map[key]int{}
	requests := map[string]int{}
	for _, r := range recs {
		switch r.Type {
		case warc.TypeResponse, warc.TypeRevisit:
			captured[key{r.URI, r.Date}]++
			if r.Type == warc.TypeResponse {
				responses++
			} else {
				revisits++
			}
			if r.DigestOK != nil && !*r.DigestOK {
				t.Errorf("payload digest of %s does not match its payload", r.URI)
			}
		case warc.TypeRequest:
			requests[r.URI]++
		}
	}
	var fetches int
	var unarchived, pending int
	// A capture is archived when it has a placement (schema 0046), and then waits no more.
	if err := s.store.Pool().QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE p.fetch_id IS NULL),
			count(*) FILTER (WHERE EXISTS (SELECT 1 FROM warc_pending w WHERE w.crawl_id = f.crawl_id AND w.fetch_id = f.id))
		FROM fetches f LEFT JOIN warc_placements p ON p.fetch_id = f.id
		WHERE f.crawl_id = $1 AND f.status IS NOT NULL`, crawlID).Scan(&fetches, &unarchived, &pending); err != nil {
		t.Fatal(err)
	}
	if pending != unarchived {
		t.Errorf("%d captures still wait for the archiver, %d have no placement: each capture is one or the other", pending, unarchived)
	}
	var loads int // what browsers loaded while they rendered pages: captures too
	if err := s.store.Pool().QueryRow(ctx, `SELECT coalesce(sum(jsonb_array_length(loads)), 0) FROM renders
		WHERE crawl_id = $1 AND loads IS NOT NULL`, crawlID).Scan(&loads); err != nil {
		t.Fatal(err)
	}
	fetches += loads
	if unarchived != 0 {
		rows, _ := s.store.Pool().Query(ctx, `SELECT f.id, u.url, f.status, f.fetched_at, u.state, (SELECT max(created_at) FROM warc_files)
			FROM fetches f JOIN urls u USING (crawl_id, url_hash) WHERE f.crawl_id = $1 AND f.status IS NOT NULL
				AND NOT EXISTS (SELECT 1 FROM warc_placements p WHERE p.fetch_id = f.id)`, crawlID)
		for rows.Next() {
			var id int64
			var u, state string
			var status int
			var at, filed time.Time
			_ = rows.Scan(&id, &u, &status, &at, &state, &filed)
			t.Logf("not archived: fetch %d %s %d at %s (url now %s); last WARC file written %s", id, u, status,
				at.Format("15:04:05.000"), state, filed.Format("15:04:05.000"))
		}
		rows.Close()
	}
	if unarchived != 0 || responses+revisits != fetches || len(captured) != fetches {
		t.Errorf("%d captures in Postgres (%d of them browser loads; %d not archived); WARC has %d responses + %d revisits for %d distinct captures",
			fetches, loads, unarchived, responses, revisits, len(captured))
	}
	for k := range captured {
		if requests[k.uri] == 0 {
			t.Errorf("no request record for %s", k.uri)
		}
	}
	checkSpliced(t, s, crawlID, data)
	// The CDXJ lines, each range cut out of its file, concatenated: a WARC of its own that must
	// read back record for line.
	var cut []byte
	var lines []string
	for _, f := range files {
		idx, err := s.blob.Get(ctx, f.CDXKey, 1<<30)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(idx)), "\n") {
			if line == "" { // a file of rendered DOMs only (conversion records) indexes nothing
				continue
			}
			var e struct{ URL, Offset, Length, Filename string }
			if err := json.Unmarshal([]byte(line[strings.Index(line, "{"):]), &e); err != nil {
				t.Fatalf("CDXJ line %q: %v", line, err)
			}
			var off, n int64
			_ = json.Unmarshal([]byte(e.Offset), &off)
			_ = json.Unmarshal([]byte(e.Length), &n)
			b := data[e.Filename]
			if e.Filename != f.Name || off+n > int64(len(b)) || n == 0 {
				t.Fatalf("CDXJ line %q points outside %s", line, f.Name)
			}
			cut = append(cut, b[off:off+n]...)
			lines = append(lines, line)
		}
	}
	p := filepath.Join(t.TempDir(), "cdx-cut.warc.gz")
	if err := os.WriteFile(p, cut, 0o644); err != nil {
		t.Fatal(err)
	}
	back := testenv.ReadWARC(t, p)
	if len(back) != len(lines) || len(lines) != fetches {
		t.Fatalf("%d CDXJ lines for %d captures cut out %d records", len(lines), fetches, len(back))
	}
	for i, r := range back {
		if !strings.Contains(lines[i], `"url":"`+r.URI+`"`) || !strings.Contains(lines[i], " "+warc.Timestamp14(mustTime(t, r.Date))+" ") {
			t.Errorf("CDXJ line %q cut out %s of %s", lines[i], r.Type, r.URI)
		}
	}
	return responses, revisits
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("WARC-Date %q: %v", s, err)
	}
	return v
}

// checkDuplicates scores the crawl's duplicate verdicts against the test web's labelled
// clusters: a document marked as a duplicate must name a document of its own cluster.
func checkDuplicates(t *testing.T, s *stack, crawlID string, truth *testweb.Truth) {
	t.Helper()
	cluster := map[string]int{}
	for i, c := range truth.Clusters {
		for _, u := range c.URLs {
			cluster[u] = i + 1
		}
	}
	rows, err := s.store.Pool().Query(context.Background(), `SELECT u.url, coalesce(o.url, ''), coalesce(d.dup_kind, '')
		FROM documents d JOIN urls u USING (crawl_id, url_hash)
		LEFT JOIN urls o ON o.crawl_id = d.crawl_id AND o.url_hash = d.dup_of WHERE d.crawl_id = $1`, crawlID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var tp, fp int
	inCluster := map[int]int{}
	kinds := map[string]int{}
	for rows.Next() {
		var u, of, kind string
		if err := rows.Scan(&u, &of, &kind); err != nil {
			t.Fatal(err)
		}
		if c := cluster[u]; c > 0 {
			inCluster[c]++
		}
		if of == "" {
			continue
		}
		kinds[kind]++
		if cluster[u] > 0 && cluster[u] == cluster[of] {
			tp++
		} else {
			fp++
			t.Errorf("%s marked a %s duplicate of %s, outside its cluster", u, kind, of)
		}
	}
	want := 0 // every member of a cluster but its first is a duplicate
	for _, n := range inCluster {
		want += n - 1
	}
	precision, recall := 1.0, 1.0
	if tp+fp > 0 {
		precision = float64(tp) / float64(tp+fp)
	}
	if want > 0 {
		recall = float64(tp) / float64(want)
	}
	t.Logf("duplicates: precision %.3f recall %.3f (%d found of %d, %d wrong; by detector %v)", precision, recall, tp, want, fp, kinds)
	if want == 0 || precision < 0.95 || recall < 0.90 || kinds["exact"] == 0 || kinds["simhash"]+kinds["minhash"] == 0 {
		t.Errorf("duplicate detection on the test web's clusters: precision %.3f, recall %.3f, kinds %v", precision, recall, kinds)
	}
}

// A recrawl of etag.test: unchanged pages answer conditional requests with 304 and store
// nothing new; changing pages are fetched again sooner than unchanged ones; the WARC output
// has revisit records for the 304s.
func TestRecrawlIsConditionalAndAdaptive(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.Pages = 1, 2
	wc.DefaultDelay = 100 * time.Millisecond
	wc.ChangePeriod = 1500 * time.Millisecond
	// Recrawl intervals of a second here: segments written every 200 ms, not every 2 s, so a
	// changed page's processing (which schedules its recrawl) is not what the test measures.
	s := newStackWithoutWorkers(t, wc)
	s.cfg.SegmentMaxAge = 200 * time.Millisecond
	s.startWorkers(s.cfg)
	spec := crawl.Spec{
		Seeds: []string{"http://etag.test/"}, Scope: crawl.ScopeHost,
		Delay: crawl.Duration(100 * time.Millisecond), BatchWindow: crawl.Duration(2 * time.Second),
		RequestTimeout: crawl.Duration(3 * time.Second), HostIdleTimeout: crawl.Duration(time.Minute),
		ProgressInterval: crawl.Duration(time.Second),
		Recrawl: crawl.Recrawl{Interval: crawl.Duration(3 * time.Second), MinInterval: crawl.Duration(time.Second),
			MaxInterval: crawl.Duration(30 * time.Second)},
	}
	spec.Name = testenv.Unique("recrawl")
	run := s.start(spec)
	time.Sleep(25 * time.Second)
	if err := s.tc.SignalWorkflow(context.Background(), run.GetID(), "", crawl.SignalStop, nil); err != nil {
		t.Fatal(err)
	}
	p := s.wait(run, time.Minute)

	reqs := s.web.Audit().Requests("etag.test")
	fetches := map[string]int{}
	conditional, notModified := map[string]int{}, map[string]int{}
	for _, r := range reqs {
		if r.Path == "/robots.txt" {
			continue
		}
		fetches[r.Path]++
		if r.Conditional {
			conditional[r.Path]++
		}
		if r.Status == 304 {
			notModified[r.Path]++
		}
	}
	t.Logf("fetches %v; conditional %v; 304 %v; progress %+v", fetches, conditional, notModified, p)
	stable, changing := 0, 0
	for i := 1; i <= 3; i++ {
		st, ch := "/stable/"+string(rune('0'+i)), "/changing/"+string(rune('0'+i))
		if fetches[st] < 2 || conditional[st] != fetches[st]-1 || notModified[st] != fetches[st]-1 {
			t.Errorf("%s: %d fetches, %d conditional, %d answered 304; want every recrawl conditional and 304",
				st, fetches[st], conditional[st], notModified[st])
		}
		stable += fetches[st]
		changing += fetches[ch]
	}
	if changing <= stable*3/2 {
		t.Errorf("changing pages fetched %d times, unchanged ones %d: changed pages should come back sooner", changing, stable)
	}
	// Nothing new stored for a 304: one 2xx fetch with a body per stable page, one document.
	ctx := context.Background()
	var bodies, changedBodies int
	if err := s.store.Pool().QueryRow(ctx, `SELECT count(*) FILTER (WHERE u.url LIKE '%/stable/%'),
			count(DISTINCT f.content_hash) FILTER (WHERE u.url LIKE '%/changing/%')
		FROM fetches f JOIN urls u USING (crawl_id, url_hash) WHERE f.crawl_id = $1 AND f.body_key IS NOT NULL`,
		p.CrawlID).Scan(&bodies, &changedBodies); err != nil {
		t.Fatal(err)
	}
	if bodies != 3 || changedBodies < 6 {
		t.Errorf("stable pages stored %d bodies (want 3, one each); changing pages %d versions (want more than 3)", bodies, changedBodies)
	}
	var stableInterval, changingInterval float64
	_ = s.store.Pool().QueryRow(ctx, `SELECT avg(recrawl_s) FILTER (WHERE url LIKE '%/stable/%'),
		avg(recrawl_s) FILTER (WHERE url LIKE '%/changing/%') FROM urls WHERE crawl_id = $1`, p.CrawlID).Scan(&stableInterval, &changingInterval)
	t.Logf("recrawl interval now: stable %.1fs, changing %.1fs", stableInterval, changingInterval)
	if stableInterval <= changingInterval {
		t.Errorf("unchanged pages' interval %.1fs is not longer than changing pages' %.1fs", stableInterval, changingInterval)
	}
	responses, revisits := checkWARC(t, s, p.CrawlID)
	total304 := 0
	for _, n := range notModified {
		total304 += n
	}
	if revisits < total304 || responses == 0 {
		t.Errorf("WARC: %d responses, %d revisits; want a revisit for each of %d 304s", responses, revisits, total304)
	}
}

// checkSpliced checks that every response record of a fetch with a stored body carries the
// body's compressed stream as its segment holds it: the archiver compressed only what
// surrounds the body (gz.WriteSpliced), never the body again.
func checkSpliced(t *testing.T, s *stack, crawlID string, data map[string][]byte) {
	t.Helper()
	ctx := context.Background()
	rows, err := s.store.Pool().Query(ctx, `SELECT f.body_key, p.warc_file, p.warc_offset, p.warc_length
		FROM fetches f JOIN warc_placements p ON p.fetch_id = f.id WHERE f.crawl_id = $1 AND f.body_key IS NOT NULL`, crawlID)
	if err != nil {
		t.Fatal(err)
	}
	type placed struct {
		key, file string
		off, n    int64
	}
	ps, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (placed, error) {
		var p placed
		return p, r.Scan(&p.key, &p.file, &p.off, &p.n)
	})
	if err != nil {
		t.Fatal(err)
	}
	bodies := segment.NewReader(s.blob, 256<<20)
	var responses, spliced int
	for _, p := range ps {
		b := data[p.file]
		if p.off+p.n > int64(len(b)) {
			t.Fatalf("fetch of %s placed outside %s", p.key, p.file)
		}
		rec := b[p.off : p.off+p.n]
		zr, err := gzip.NewReader(bytes.NewReader(rec))
		if err != nil {
			t.Fatal(err)
		}
		head := make([]byte, 40)
		_, _ = io.ReadFull(zr, head)
		if !bytes.HasPrefix(head, []byte("WARC/1.1\r\nWARC-Type: response\r\n")) {
			continue // a revisit: no body
		}
		responses++
		_, d, err := bodies.GetDeflated(ctx, p.key, 1<<30)
		if err != nil {
			t.Fatal(err)
		}
		if d != nil && bytes.Contains(rec, d.Stream) {
			spliced++
		}
	}
	if spliced != responses {
		t.Errorf("%d of %d response records with a stored body carry its stream as stored", spliced, responses)
	}
}

// warcRecords reads a crawl's WARC files with warcio.js: their records, and each file's bytes
// by its object name.
func warcRecords(t *testing.T, s *stack, crawlID string) ([]testenv.WARCRecord, map[string][]byte) {
	t.Helper()
	ctx := context.Background()
	files, err := s.store.Archive().WARCFiles(ctx, crawlID)
	if err != nil || len(files) == 0 {
		t.Fatalf("WARC files of %s: %v %v", crawlID, files, err)
	}
	dir := t.TempDir()
	var paths []string
	data := map[string][]byte{}
	for _, f := range files {
		b, err := s.blob.Get(ctx, f.Name, 1<<32)
		if err != nil {
			t.Fatal(err)
		}
		data[f.Name] = b
		p := filepath.Join(dir, filepath.Base(f.Name))
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return testenv.ReadWARC(t, paths...), data
}
