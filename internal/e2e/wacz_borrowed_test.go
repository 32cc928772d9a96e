package e2e

import (
	"archive/zip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trawlerdev/trawler/internal/testenv"
	"github.com/trawlerdev/trawler/internal/wacz"
)

// checkSelfContained packages the crawl "second", deduplicated against "first", once "first"
// is deleted: by default the package then carries the bodies the revisits borrow, one
// response record per body at the URL and date each revisit refers to, which warcio.js reads
// with good digests, and ReplayWeb.page replays the main page from the package alone.
func checkSelfContained(t *testing.T, s *stack, trawler func(bool, ...string) string) {
	out := filepath.Join(t.TempDir(), "second.wacz")
	said := trawler(true, "warc", "--crawl", "second", "--wacz", out)
	if !strings.Contains(said, "the package replays alone") {
		t.Errorf("trawler warc --wacz of a crawl whose lender is deleted said %q; want the borrowed bodies carried", said)
	}
	if bad := trawler(false, "warc", "--crawl", "second", "--wacz", out, "--borrowed", "sometimes"); !strings.Contains(bad, "--borrowed") {
		t.Errorf("a bad --borrowed said %q", bad)
	}
	zr, err := zip.OpenReader(out)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	dir := t.TempDir()
	var files []string
	var borrowedFile string
	for _, f := range zr.File {
		if !strings.HasPrefix(f.Name, "archive/") {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.Base(f.Name))
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
		if filepath.Base(f.Name) == wacz.BorrowedName("second") {
			borrowedFile = p
		}
	}
	if borrowedFile == "" {
		t.Fatalf("the package holds no %s: %v", wacz.BorrowedName("second"), files)
	}
	carried := map[string]string{} // URL → payload digest of the carried responses
	var revisits []testenv.WARCRecord
	for _, r := range testenv.ReadWARC(t, files...) {
		switch {
		case r.File == borrowedFile && r.Type == "response":
			if r.DigestOK == nil || !*r.DigestOK {
				t.Errorf("carried %s: its payload does not match its digest", r.URI)
			}
			carried[r.URI] = r.PayloadDigest
		case r.Type == "revisit":
			revisits = append(revisits, r)
		}
	}
	if len(revisits) == 0 || len(carried) == 0 {
		t.Fatalf("%d revisits, %d carried bodies; want both", len(revisits), len(carried))
	}
	for _, r := range revisits {
		if d, ok := carried[r.RefersTo]; !ok || d != r.PayloadDigest {
			t.Errorf("the revisit of %s refers to %s (%s); the package carries %q there", r.URI, r.RefersTo, r.PayloadDigest, d)
		}
	}
	var main string
	if err := s.store.Pool().QueryRow(t.Context(), `SELECT u.url FROM urls u JOIN documents d USING (crawl_id, url_hash)
		WHERE u.crawl_id = 'second' AND coalesce(d.title, '') <> '' ORDER BY u.url LIMIT 1`).Scan(&main); err != nil {
		t.Fatalf("a page of the second crawl with a title: %v", err)
	}
	replayShows(t, out, main, pageTitle(t, s, "second", main))
	t.Logf("self-contained package: %d revisits, %d bodies carried; %s replays with the first crawl deleted", len(revisits), len(carried), main)
}
