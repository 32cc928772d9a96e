package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/parquet-go/parquet-go"

	"github.com/trawlerdev/trawler/internal/api"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/export"
	"github.com/trawlerdev/trawler/internal/segment"
	"github.com/trawlerdev/trawler/internal/store"
	"github.com/trawlerdev/trawler/internal/testenv"
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

// A user crawls, then exports what was stored for the next tool (JSON Lines, CSV, Parquet),
// looks at the report, and packages the crawl as WACZ that ReplayWeb.page replays.
func TestACrawlsResultsCanBeExportedReportedAndPackaged(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.Pages, wc.Specials = 3, 12, false
	s := newStack(t, wc)
	// A depth limit turns some links away: every chart of the report has something to draw.
	p := s.crawl(crawl.Spec{Name: "results", Seeds: s.web.Seeds(), Scope: crawl.ScopeAny, Delay: crawl.Duration(20 * time.Millisecond),
		MaxDepth: 3, ProgressInterval: crawl.Duration(time.Second)}, 3*time.Minute)
	if p.State != "done" {
		t.Fatalf("crawl: %+v", p)
	}
	r := &resultsStack{stack: s, bin: buildBinary(t, "trawler", "./starter"), dir: t.TempDir()}
	checkExport(t, r)
	checkReport(t, r)
	checkWACZ(t, r)
}

// reportCharts are the charts a report draws.
var reportCharts = []string{"timeline", "statuses", "types", "depths", "duplicates", "topHosts", "errorHosts", "politeness", "reasons"}

// checkReport writes the crawl's report with the CLI, opens the HTML file in headless Chromium
// (offline: a file, no network) and counts the charts drawn — each a canvas with a chart and
// ink on it — and reads the JSON and the API's answers.
func checkReport(t *testing.T, r *resultsStack) {
	// --out names a folder that does not exist yet: the report makes it.
	out := strings.Fields(string(r.trawler(t, "report", "--crawl", "results", "--out", filepath.Join(r.dir, "reports", "new"))))
	if len(out) != 2 || !strings.HasSuffix(out[0], "results.html") || !strings.HasSuffix(out[1], "results.json") {
		t.Fatalf("trawler report wrote %q", out)
	}
	var figures struct {
		Pages    int64 `json:"pages"`
		Timeline []struct {
			Pages int64 `json:"pages"`
		} `json:"timeline"`
		Statuses []store.Count `json:"statuses"`
		Seeds    []store.Seed  `json:"seeds"`
	}
	data, err := os.ReadFile(out[1])
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &figures); err != nil {
		t.Fatal(err)
	}
	var timelinePages int64
	for _, p := range figures.Timeline {
		timelinePages += p.Pages
	}
	var pages int64
	if err := r.store.Pool().QueryRow(context.Background(), `SELECT count(*) FROM fetches WHERE crawl_id = 'results' AND status BETWEEN 200 AND 299`).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if figures.Pages != pages || timelinePages < pages || len(figures.Statuses) == 0 || len(figures.Seeds) != len(r.web.Seeds()) {
		t.Errorf("the report's JSON says %d pages (timeline %d), statuses %v, %d seeds; the store: %d pages, %d seeds",
			figures.Pages, timelinePages, figures.Statuses, len(figures.Seeds), pages, len(r.web.Seeds()))
	}

	ctx := testenv.Browser(t)
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+out[0]), chromedp.WaitReady(chromedp.CSS("body[data-charts]"))); err != nil {
		t.Fatalf("open the report in Chromium: %v", err)
	}
	drawn, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('canvas')).filter(function (c) {
			var chart = Chart.getChart(c);
			if (!chart || c.width === 0 || c.height === 0) return false;
			var px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data, ink = 0;
			for (var i = 3; i < px.length; i += 4) if (px[i] > 0) ink++;
			return ink > 500 && chart.data.datasets.some(function (d) { return d.data.length > 0; });
		}).map(function (c) { return c.id; })`))
	if err != nil {
		t.Fatalf("count the report's charts: %v", err)
	}
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot the report: %v", err)
	}
	missing := []string{}
	for _, id := range reportCharts {
		if !slices.Contains(drawn, id) {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		t.Errorf("charts drawn %v; not drawn %v", drawn, missing)
	}
	if dir := os.Getenv("SCREENSHOT_DIR"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, "report.png"), shot, 0o644)
	}

	// The API serves the same report.
	srv := httptest.NewServer((&api.Server{Store: r.store, Temporal: r.tc, IDPrefix: r.cfg.IDPrefix}).Handler())
	defer srv.Close()
	for _, c := range []struct{ query, ctype, body string }{
		{"crawl=results", "text/html", "<canvas id=\"timeline\">"},
		{"crawl=results&format=json", "application/json", `"timeline"`},
	} {
		resp, err := http.Get(srv.URL + "/api/v1/report?" + c.query)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), c.ctype) || !strings.Contains(string(body), c.body) {
			t.Errorf("GET /api/v1/report?%s: %d %s, %d bytes", c.query, resp.StatusCode, resp.Header.Get("Content-Type"), len(body))
		}
		csp := resp.Header.Get("Content-Security-Policy")
		_, nonce, _ := strings.Cut(csp, "script-src 'nonce-")
		nonce, _, _ = strings.Cut(nonce, "'")
		if nonce == "" || strings.Contains(csp, "unsafe-inline") || (c.ctype == "text/html" && strings.Count(string(body), `nonce="`+nonce+`"`) != 3) {
			t.Errorf("GET /api/v1/report?%s: CSP %q; want the page's own elements nonced, nothing inline else", c.query, csp)
		}
	}
	if resp, err := http.Get(srv.URL + "/api/v1/report?crawl=nope"); err != nil || resp.StatusCode != 404 {
		t.Errorf("the report of an unknown crawl: %v %v", resp, err)
	}
	t.Logf("report: %d charts drawn (%v), %d-byte screenshot", len(drawn), drawn, len(shot))
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
			(SELECT count(*) FROM unnest(d.link_to) AS l(h) JOIN urls t ON t.crawl_id = u.crawl_id AND t.url_hash = l.h)
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
