package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/testweb"
)

// pydocDir is where scripts/tools.sh unpacks Python's HTML manual from Debian.
const pydocDir = ".tools/pydoc/usr/share/doc/python3.11/html"

// A real documentation site (Python's HTML manual from Debian: Sphinx pages with their
// stylesheets, scripts and images) and the test web's style.test, crawled twice: without
// requisites, the pages replayed from the archive alone look little like the live pages
// (trawler qa scores them below 0.95); with requisites, every sampled page scores at least
// 0.95, which the report shows.
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
	qa := func(name string, args ...string) (min, mean float64, out string) {
		cmd := exec.Command(r.bin, append([]string{"qa", "--crawl", name, "--sample", "6", "--shots", filepath.Join(os.Getenv("SHOTS"), name)}, args...)...)
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
}

func minF(a, b float64) float64 {
	if a < b {
		return a
	}
	return b
}
