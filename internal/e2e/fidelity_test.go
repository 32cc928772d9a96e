package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/fidelity"
	"github.com/trawlerdev/trawler/internal/render"
	"github.com/trawlerdev/trawler/internal/testenv"
	"github.com/trawlerdev/trawler/internal/testweb"
)

// pydocDir is where scripts/tools.sh unpacks Python's HTML manual from Debian.
const pydocDir = ".tools/pydoc/usr/share/doc/python3.11/html"

// A real documentation site (Python's HTML manual from Debian: Sphinx pages with their
// stylesheets, scripts and images) and the test web's style.test, crawled twice: without
// requisites, the pages replayed from the archive alone look little like the live pages
// (trawler qa scores them below 0.95); with requisites, every sampled page scores at least
// 0.95, which the report shows; and ReplayWeb.page, replaying each sampled page from the
// crawl's WACZ, shows it as the live page looked (at least 0.95 too). No host's pace is broken.
func TestReplayFidelity(t *testing.T) {
	docs := filepath.Join(repoRoot(t), pydocDir)
	if _, err := os.Stat(filepath.Join(docs, "index.html")); err != nil {
		t.Fatalf("the Python manual is not unpacked: run scripts/tools.sh (make up does): %v", err)
	}
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.Pages, wc.Specials, wc.Requisites, wc.DocsDir = 1, 3, false, true, docs
	wc.DefaultDelay = 10 * time.Millisecond
	s := newStack(t, wc)
	r := &resultsStack{stack: s, bin: buildBinary(t, "trawler", "./starter"), dir: t.TempDir()}
	spec := func(name string, requisites bool) crawl.Spec {
		sp := crawl.Spec{Name: name, Seeds: []string{"http://" + testweb.DocsHost + "/", "http://style.test/"}, Scope: crawl.ScopeHost,
			Delay: crawl.Duration(wc.DefaultDelay), MaxDepth: 1, MaxPages: 24, ProgressInterval: crawl.Duration(time.Second)}
		if !requisites {
			sp.Requisites = &crawl.Requisites{Off: true}
		}
		return sp
	}
	for _, c := range []struct {
		name       string
		requisites bool
	}{{"docs-before", false}, {"docs-after", true}} {
		if p := s.crawl(spec(c.name, c.requisites), 5*time.Minute); p.State != "done" {
			t.Fatalf("crawl %s: %+v", c.name, p)
		}
	}
	shots := t.TempDir()
	qa := func(name string, args ...string) (min, mean float64, out string) {
		cmd := exec.Command(r.bin, append([]string{"qa", "--crawl", name, "--sample", "6", "--shots", filepath.Join(shots, name)}, args...)...)
		cmd.Env = append(r.env(), "DATABASE_URL="+r.cfg.DatabaseURL, "TRAWLER_S3_BUCKET="+r.cfg.S3Bucket,
			"TRAWLER_CONNECT_TO="+s.srv.ConnectTo())
		b, err := cmd.CombinedOutput()
		out = string(b)
		min = 1
		var n int
		for _, m := range regexp.MustCompile(`score ([0-9.]+)`).FindAllStringSubmatch(out, -1) {
			v, _ := strconv.ParseFloat(m[1], 64)
			min = minF(min, v)
			mean += v
			n++
		}
		if n == 0 {
			t.Fatalf("trawler qa --crawl %s measured nothing (%v):\n%s", name, err, out)
		}
		if len(args) > 0 && err != nil {
			t.Errorf("trawler qa --crawl %s %v: %v\n%s", name, args, err, out)
		}
		return min, mean / float64(n), out
	}
	beforeMin, beforeMean, beforeOut := qa("docs-before")
	afterMin, afterMean, afterOut := qa("docs-after", "--min", "0.95")
	t.Logf("without requisites:\n%s", beforeOut)
	t.Logf("with requisites:\n%s", afterOut)
	if beforeMin >= 0.95 {
		t.Errorf("without requisites every sampled page scored at least %.3f: the score does not see what is missing", beforeMin)
	}
	if afterMin < 0.95 {
		t.Errorf("with requisites a sampled page scored %.3f; want every page at least 0.95", afterMin)
	}
	r.trawler(t, "report", "--crawl", "docs-after", "--out", r.dir)
	raw, err := os.ReadFile(filepath.Join(r.dir, "docs-after.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Replay struct {
			Measured int     `json:"measured"`
			Min      float64 `json:"min"`
		} `json:"replayFidelity"`
		Fidelity []struct{ URL string } `json:"fidelity"`
	}
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Replay.Measured != 6 || rep.Replay.Min < 0.95 || len(rep.Fidelity) != 6 {
		t.Errorf("the report's replay fidelity: %+v, %d pages", rep.Replay, len(rep.Fidelity))
	}
	if html, err := os.ReadFile(filepath.Join(r.dir, "docs-after.html")); err != nil || !strings.Contains(string(html), "Replay fidelity") {
		t.Errorf("the HTML report shows no replay fidelity (%v)", err)
	}
	t.Logf("replay fidelity: before %.3f mean, %.3f worst; after %.3f mean, %.3f worst", beforeMean, beforeMin, afterMean, afterMin)

	// The package users open: ReplayWeb.page replays each sampled page from the WACZ, and what
	// its frame shows is compared with what the page showed live.
	pkg := filepath.Join(r.dir, "docs.wacz")
	r.trawler(t, "warc", "--crawl", "docs-after", "--wacz", pkg)
	srv := replayWebPage(t, pkg)
	bctx := testenv.Browser(t)
	worst := 1.0
	for _, m := range regexp.MustCompile(`(?m)^(\S+)\tshots (\d+)-live`).FindAllStringSubmatch(afterOut, -1) {
		page, live := m[1], filepath.Join(shots, "docs-after", m[2]+"-live")
		png, err1 := os.ReadFile(live + ".png")
		text, err2 := os.ReadFile(live + ".txt")
		if err := errors.Join(err1, err2); err != nil {
			t.Fatal(err)
		}
		seen := lookInReplay(t, bctx, srv.URL, page)
		score, err := fidelity.Compare(&render.Seen{PNG: png, Text: string(text)}, seen)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("ReplayWeb.page: %s\tscore %.3f\tpixels %.3f\ttext %.3f", page, score.Score, score.Pixels, score.Text)
		if score.Score < 0.95 {
			t.Errorf("ReplayWeb.page's replay of %s from the WACZ scores %.3f against the live page; want at least 0.95", page, score.Score)
			if dir := os.Getenv("SCREENSHOT_DIR"); dir != "" {
				_ = os.WriteFile(filepath.Join(dir, "rwp-"+m[2]+".png"), seen.PNG, 0o644)
			}
		}
		worst = minF(worst, score.Score)
	}
	t.Logf("ReplayWeb.page replays of the WACZ: worst %.3f", worst)
	checkNoPoliteness(t, s) // the crawls' and the live looks' requests alike
}

// lookInReplay has ReplayWeb.page (served at base) replay pageURL in a frame of the live
// look's viewport and returns what the replayed frame shows, once it has loaded and its
// scripts have had the time the live look gave them: a screenshot of the frame alone and its
// visible text.
func lookInReplay(t *testing.T, bctx context.Context, base, pageURL string) *render.Seen {
	t.Helper()
	if err := chromedp.Do(bctx, chromedp.Navigate(fmt.Sprintf("%s/?url=%s&w=%d&h=%d", base, url.QueryEscape(pageURL),
		render.ViewportWidth, render.ViewportHeight))); err != nil {
		t.Fatalf("open the replay page: %v", err)
	}
	// The replayed page lies in frames within shadow roots, all of this origin: a script walks
	// them to the frame replaying pageURL, summing the frames' offsets on the way to place it.
	const find = `(function (needle) {
		function walk(root, depth, x, y) {
			if (!root || depth > 12) return null;
			if (root.nodeType === 9 && root.defaultView !== window && root.location.href.indexOf('/replay/') >= 0 &&
				root.location.href.slice(-needle.length) === needle) return {doc: root, x: x, y: y};
			var els = root.querySelectorAll('*');
			for (var i = 0; i < els.length; i++) {
				var el = els[i], found = null;
				if (el.shadowRoot) found = walk(el.shadowRoot, depth + 1, x, y);
				if (!found && el.tagName === 'IFRAME') {
					var d = null, r = el.getBoundingClientRect();
					try { d = el.contentDocument; } catch (e) {}
					found = walk(d, depth + 1, x + r.left + el.clientLeft, y + r.top + el.clientTop);
				}
				if (found) return found;
			}
			return null;
		}
		var f = walk(document, 0, 0, 0);
		if (!f || f.doc.readyState !== 'complete' || !f.doc.body) return null;
		var v = f.doc.defaultView;
		return {x: f.x, y: f.y, w: v.innerWidth, h: v.innerHeight, text: f.doc.body.innerText};
	})(%s)`
	type frame struct {
		X, Y, W, H float64
		Text       string
	}
	deadline := time.Now().Add(90 * time.Second)
	var f *frame
	for f == nil {
		got, err := chromedp.Run(bctx, chromedp.Evaluate[*frame](fmt.Sprintf(find, jsString(pageURL))))
		if err == nil && got != nil {
			f = got
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ReplayWeb.page did not replay %s within 90 s (last error %v)", pageURL, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	time.Sleep(time.Second) // the live look's settle, and then some
	f, err := chromedp.Run(bctx, chromedp.Evaluate[*frame](fmt.Sprintf(find, jsString(pageURL))))
	if err != nil || f == nil {
		t.Fatalf("the replayed frame of %s went away: %v", pageURL, err)
	}
	if int(f.W) != render.ViewportWidth || int(f.H) != render.ViewportHeight {
		t.Errorf("the replayed frame is %.0f×%.0f, not the live look's %d×%d", f.W, f.H, render.ViewportWidth, render.ViewportHeight)
	}
	shot, err := chromedp.Call(bctx, page.CaptureScreenshot, page.CaptureScreenshotParams{Format: page.CaptureScreenshotFormatPng,
		Clip: &page.Viewport{X: f.X, Y: f.Y, Width: f.W, Height: f.H, Scale: 1}})
	if err != nil {
		t.Fatalf("screenshot the replayed frame: %v", err)
	}
	return &render.Seen{PNG: shot.Data, Text: f.Text}
}

func minF(a, b float64) float64 {
	if a < b {
		return a
	}
	return b
}
