package e2e

import (
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/trawlerdev/trawler/internal/testenv"
	"github.com/trawlerdev/trawler/internal/wacz"
)

// checkWACZ packages the crawl "results" as WACZ with the CLI and checks it as the spec asks
// (WARC files stored, not compressed again; every resource's size and SHA-256 in
// datapackage.json, which datapackage-digest.json digests; pages.jsonl; a CDXJ index whose
// every line cuts out its record), reads the WARC files inside with warcio.js, and has
// ReplayWeb.page — served on loopback, in headless Chromium — replay a crawled page from it.
func checkWACZ(t *testing.T, r *resultsStack) {
	out := filepath.Join(r.dir, "results.wacz")
	said := string(r.trawler(t, "warc", "--crawl", "results", "--wacz", out))
	if !strings.Contains(said, "WACZ 1.1.1") {
		t.Errorf("trawler warc --wacz said %q", said)
	}
	zr, err := zip.OpenReader(out)
	if err != nil {
		t.Fatalf("the WACZ is not a zip: %v", err)
	}
	defer zr.Close()
	entries := map[string]*zip.File{}
	for _, f := range zr.File {
		entries[f.Name] = f
	}
	read := func(name string) []byte {
		f := entries[name]
		if f == nil {
			t.Fatalf("the WACZ holds no %s (it holds %v)", name, keys(entries))
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		b, err := io.ReadAll(rc)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return b
	}
	var pkg wacz.Package
	manifest := read("datapackage.json")
	if err := json.Unmarshal(manifest, &pkg); err != nil {
		t.Fatal(err)
	}
	var digest struct{ Path, Hash string }
	_ = json.Unmarshal(read("datapackage-digest.json"), &digest)
	if sum := sha256.Sum256(manifest); digest.Path != "datapackage.json" || digest.Hash != "sha256:"+hex.EncodeToString(sum[:]) {
		t.Errorf("datapackage-digest.json says %+v", digest)
	}
	if pkg.Profile != "data-package" || pkg.WACZVersion != "1.1.1" || pkg.MainPageURL == "" {
		t.Errorf("datapackage.json: %+v", pkg)
	}
	listed := map[string]bool{}
	var warcs []string
	for _, res := range pkg.Resources {
		listed[res.Path] = true
		b := read(res.Path)
		sum := sha256.Sum256(b)
		if res.Hash != "sha256:"+hex.EncodeToString(sum[:]) || res.Bytes != int64(len(b)) {
			t.Errorf("%s: datapackage.json says %s, %d bytes; it holds %x, %d bytes", res.Path, res.Hash, res.Bytes, sum, len(b))
		}
		if strings.HasPrefix(res.Path, "archive/") {
			warcs = append(warcs, res.Path)
			if entries[res.Path].Method != zip.Store {
				t.Errorf("%s is compressed in the zip; WACZ stores WARC files as they are", res.Path)
			}
		}
	}
	for _, want := range []string{"indexes/index.cdxj", "pages/pages.jsonl"} {
		if !listed[want] {
			t.Errorf("datapackage.json does not list %s", want)
		}
	}
	if len(warcs) == 0 {
		t.Fatal("no WARC file in the WACZ")
	}
	// Every index line's file, offset and length cut out a gzip member holding the record of
	// that URL.
	sc := bufio.NewScanner(bytes.NewReader(read("indexes/index.cdxj")))
	sc.Buffer(nil, 1<<20)
	var lines int
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), " ", 3)
		var e struct {
			URL      string `json:"url"`
			Filename string `json:"filename"`
			Offset   int64  `json:"offset,string"`
			Length   int64  `json:"length,string"`
		}
		if len(parts) != 3 || json.Unmarshal([]byte(parts[2]), &e) != nil {
			t.Fatalf("index line %q", sc.Text())
		}
		data := read("archive/" + e.Filename)
		if e.Offset+e.Length > int64(len(data)) {
			t.Fatalf("index line %q points past its file", sc.Text())
		}
		zr, err := gzip.NewReader(bytes.NewReader(data[e.Offset : e.Offset+e.Length]))
		if err != nil {
			t.Fatalf("index line %q: no gzip member there: %v", sc.Text(), err)
		}
		zr.Multistream(false)
		rec, _ := io.ReadAll(zr)
		if !bytes.HasPrefix(rec, []byte("WARC/1.1")) || !bytes.Contains(rec, []byte("WARC-Target-URI: "+e.URL)) {
			t.Errorf("index line for %s cuts out %.120q", e.URL, rec)
		}
		lines++
	}
	pages := strings.Split(strings.TrimSpace(string(read("pages/pages.jsonl"))), "\n")
	if len(pages) < 2 || !strings.Contains(pages[0], `"json-pages-1.0"`) {
		t.Errorf("pages.jsonl begins %q", pages[0])
	}
	// warcio.js reads every WARC file inside.
	dir := t.TempDir()
	var files []string
	for _, w := range warcs {
		p := filepath.Join(dir, path.Base(w))
		if err := os.WriteFile(p, read(w), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	if recs := testenv.ReadWARC(t, files...); len(recs) < lines {
		t.Errorf("warcio.js read %d records; the index names %d", len(recs), lines)
	}
	replayInBrowser(t, r, out, pkg.MainPageURL)
	t.Logf("WACZ: %d WARC files, %d index lines, %d pages, replayed %s", len(warcs), lines, len(pages)-1, pkg.MainPageURL)
}

// replayInBrowser serves ReplayWeb.page and the WACZ on loopback, opens the page embedding
// the archive in headless Chromium, and waits for the replayed page's own text in the
// replayed frame.
func replayInBrowser(t *testing.T, r *resultsStack, waczPath, pageURL string) {
	replayShows(t, waczPath, pageURL, pageTitle(t, r.stack, "results", pageURL))
}

// pageTitle is the title a crawl's document of pageURL holds: text its replay must show.
func pageTitle(t *testing.T, s *stack, crawlID, pageURL string) string {
	var title string
	if err := s.store.Pool().QueryRow(context.Background(), `SELECT coalesce(d.title, '') FROM documents d JOIN urls u USING (crawl_id, url_hash)
		WHERE u.crawl_id = $1 AND u.url = $2`, crawlID, pageURL).Scan(&title); err != nil || title == "" {
		t.Fatalf("the page %s of crawl %s has no title to look for (%v)", pageURL, crawlID, err)
	}
	return title
}

// replayWebPage serves ReplayWeb.page and the WACZ on loopback until the test ends: its page
// /?url=URL replays URL from the package in a frame of 1280×800 pixels (w and h change that).
func replayWebPage(t *testing.T, waczPath string) *httptest.Server {
	rwp := filepath.Join(repoRoot(t), ".tools", "replaywebpage")
	if _, err := os.Stat(filepath.Join(rwp, "sw.js")); err != nil {
		t.Fatalf("ReplayWeb.page is not installed: run scripts/tools.sh (make up does): %v", err)
	}
	mux := http.NewServeMux()
	// Every path but the files below gets the embedding page: the embed's first frame
	// (replayBase, before the service worker serves the app there) loads it again, with the
	// page last asked for.
	var mu sync.Mutex
	var last url.Values
	mux.HandleFunc("/", func(w http.ResponseWriter, req *http.Request) {
		q := req.URL.Query()
		mu.Lock()
		if q.Get("url") != "" {
			last = q
		} else if last != nil {
			q = last
		}
		mu.Unlock()
		width, height := q.Get("w"), q.Get("h")
		if width == "" {
			width, height = "1280", "800"
		}
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, `<!doctype html><html><head><script src="/ui.js"></script></head><body style="margin:0">
<replay-web-page style="display:block;width:`+width+`px;height:`+height+`px" source="/package.wacz" url="`+html.EscapeString(q.Get("url"))+`" replayBase="/replay/" embed="replayonly"></replay-web-page>
</body></html>`)
	})
	mux.HandleFunc("/ui.js", func(w http.ResponseWriter, req *http.Request) { http.ServeFile(w, req, filepath.Join(rwp, "ui.js")) })
	mux.HandleFunc("/replay/sw.js", func(w http.ResponseWriter, req *http.Request) { http.ServeFile(w, req, filepath.Join(rwp, "sw.js")) })
	mux.HandleFunc("/package.wacz", func(w http.ResponseWriter, req *http.Request) { http.ServeFile(w, req, waczPath) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// replayShows serves ReplayWeb.page and the WACZ on loopback, opens pageURL from it in
// headless Chromium, and waits for title in the replayed frame.
func replayShows(t *testing.T, waczPath, pageURL, title string) {
	srv := replayWebPage(t, waczPath)
	bctx := testenv.Browser(t)
	if err := chromedp.Do(bctx, chromedp.Navigate(srv.URL+"/?url="+url.QueryEscape(pageURL))); err != nil {
		t.Fatalf("open the replay page: %v", err)
	}
	// The replayed page lies in frames within shadow roots; all are this origin's, so a
	// script walks them.
	const find = `(function (needle) {
		function walk(root, depth) {
			if (!root || depth > 12) return null;
			var doc = root.nodeType === 9 ? root : null;
			if (doc && doc.body && doc.defaultView !== window && doc.body.innerText.indexOf(needle) >= 0) return doc.location.href;
			var els = root.querySelectorAll('*');
			for (var i = 0; i < els.length; i++) {
				var el = els[i], found = null;
				if (el.shadowRoot) found = walk(el.shadowRoot, depth + 1);
				if (!found && el.tagName === 'IFRAME') {
					var d = null;
					try { d = el.contentDocument; } catch (e) {}
					found = walk(d, depth + 1);
				}
				if (found) return found;
			}
			return null;
		}
		return walk(document, 0) || '';
	})(%q)`
	deadline := time.Now().Add(90 * time.Second)
	for {
		frame, err := chromedp.Run(bctx, chromedp.Evaluate[string](strings.Replace(find, "%q", jsString(title), 1)))
		if err == nil && frame != "" {
			if !strings.Contains(frame, pageURL) {
				t.Errorf("the text was found in frame %s, not the replayed %s", frame, pageURL)
			}
			if dir := os.Getenv("SCREENSHOT_DIR"); dir != "" {
				if shot, err := chromedp.Run(bctx, chromedp.FullScreenshot(100)); err == nil {
					_ = os.WriteFile(filepath.Join(dir, "replay.png"), shot, 0o644)
				}
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("ReplayWeb.page did not show %q from %s within 90 s (last error %v)", title, pageURL, err)
		}
		time.Sleep(time.Second)
	}
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
