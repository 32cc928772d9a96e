package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/export"
	"github.com/trawlerdev/trawler/internal/segment"
	"github.com/trawlerdev/trawler/internal/testweb"
	"github.com/trawlerdev/trawler/internal/warc"
)

// resultsStack is a finished crawl of a small test web and the trawler binary to look at it.
type resultsStack struct {
	*stack
	bin, dir string
}

func (r *resultsStack) trawler(t *testing.T, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(r.bin, args...)
	cmd.Env = append(r.env(), "DATABASE_URL="+r.cfg.DatabaseURL, "TRAWLER_S3_BUCKET="+r.cfg.S3Bucket)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("trawler %v: %v\n%s", args, err, stderr.String())
	}
	return out
}

// A user crawls, then exports what was stored for the next tool, as JSON Lines, CSV and Parquet.
func TestACrawlsResultsCanBeExported(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.Pages, wc.Specials = 3, 12, false
	s := newStack(t, wc)
	p := s.crawl(crawl.Spec{Name: "results", Seeds: s.web.Seeds(), Scope: crawl.ScopeAny, Delay: crawl.Duration(20 * time.Millisecond),
		ProgressInterval: crawl.Duration(time.Second)}, 3*time.Minute)
	if p.State != "done" {
		t.Fatalf("crawl: %+v", p)
	}
	r := &resultsStack{stack: s, bin: buildBinary(t, "trawler", "./starter"), dir: t.TempDir()}
	checkExport(t, r)
}

// checkExport exports the crawl "results" in each format and checks that every stored page
// comes back, once, with what the store holds of it: digest, status, title, text and links.
func checkExport(t *testing.T, r *resultsStack) {
	ctx := context.Background()
	type want struct {
		status      int32
		digest      string
		title, text string
		links       int
	}
	stored := map[string]want{}
	rows, err := r.store.Pool().Query(ctx, `SELECT u.url, f.status, f.content_hash, coalesce(d.title, ''), coalesce(d.text_key, ''),
			(SELECT count(*) FROM links l JOIN urls t ON t.crawl_id = l.crawl_id AND t.url_hash = l.to_hash WHERE l.crawl_id = u.crawl_id AND l.from_hash = u.url_hash)
		FROM urls u JOIN LATERAL (SELECT * FROM fetches f WHERE f.crawl_id = u.crawl_id AND f.url_hash = u.url_hash AND f.body_key IS NOT NULL
			ORDER BY f.fetched_at DESC LIMIT 1) f ON true
		LEFT JOIN documents d ON d.crawl_id = u.crawl_id AND d.url_hash = u.url_hash WHERE u.crawl_id = 'results'`)
	if err != nil {
		t.Fatal(err)
	}
	texts := segment.NewReader(r.blob, 64<<20)
	var withText int
	for rows.Next() {
		var u, textKey string
		var w want
		var hash []byte
		if err := rows.Scan(&u, &w.status, &hash, &w.title, &textKey, &w.links); err != nil {
			t.Fatal(err)
		}
		w.digest = warc.DigestOf(hash)
		if textKey != "" {
			b, err := texts.Get(ctx, textKey, 1<<24)
			if err != nil {
				t.Fatal(err)
			}
			w.text = string(b)
			withText++
		}
		stored[u] = w
	}
	rows.Close()
	if len(stored) < 20 || withText < 10 {
		t.Fatalf("the crawl stored %d pages, %d with text; want a web's worth", len(stored), withText)
	}

	// JSON Lines on standard output, every field.
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(r.trawler(t, "export", "--crawl", "results")))
	sc.Buffer(nil, 1<<26)
	for sc.Scan() {
		var rec export.Record
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("a line is not JSON: %v: %.200s", err, sc.Text())
		}
		w, ok := stored[rec.URL]
		switch {
		case !ok:
			t.Errorf("exported %s, which the crawl did not store", rec.URL)
		case seen[rec.URL]:
			t.Errorf("%s exported twice", rec.URL)
		case rec.Status != w.status || rec.Digest != w.digest || rec.Title != w.title || rec.Text != w.text || len(rec.Links) != w.links:
			t.Errorf("%s exported as status %d digest %s title %q, %d bytes of text, %d links; stored: %d %s %q, %d bytes, %d links",
				rec.URL, rec.Status, rec.Digest, rec.Title, len(rec.Text), len(rec.Links), w.status, w.digest, w.title, len(w.text), w.links)
		case rec.WARCFile == "" || rec.FetchedAt.IsZero():
			t.Errorf("%s exported without its WARC file or fetch time: %+v", rec.URL, rec)
		}
		seen[rec.URL] = true
	}
	if len(seen) != len(stored) {
		t.Errorf("JSON Lines: %d records for %d stored pages", len(seen), len(stored))
	}

	// CSV of some fields.
	csvRows, err := csv.NewReader(bytes.NewReader(r.trawler(t, "export", "--crawl", "results", "--format", "csv", "--fields", "url,status,title"))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(csvRows) != len(stored)+1 || !slices.Equal(csvRows[0], []string{"url", "status", "title"}) {
		t.Errorf("CSV: %d rows, header %v; want %d and url,status,title", len(csvRows), csvRows[0], len(stored)+1)
	}
	for _, row := range csvRows[1:] {
		if w, ok := stored[row[0]]; !ok || row[2] != w.title {
			t.Errorf("CSV row %q does not match the store", row)
		}
	}

	// Parquet into a file.
	out := filepath.Join(r.dir, "pages.parquet")
	r.trawler(t, "export", "--crawl", "results", "--format", "parquet", "--out", out)
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := parquet.Read[export.Record](bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(stored) {
		t.Errorf("Parquet: %d records for %d stored pages", len(recs), len(stored))
	}
	for _, rec := range recs {
		if w := stored[rec.URL]; rec.Digest != w.digest || rec.Text != w.text {
			t.Errorf("Parquet record of %s does not match the store", rec.URL)
		}
	}
	// --since after the crawl: nothing.
	if got := r.trawler(t, "export", "--crawl", "results", "--since", time.Now().Add(time.Minute).UTC().Format(time.RFC3339)); len(got) != 0 {
		t.Errorf("--since a minute from now exported %d bytes", len(got))
	}
	t.Logf("%d stored pages (%d with text) exported as JSON Lines, CSV and Parquet (%d bytes)", len(stored), withText, len(data))
}
