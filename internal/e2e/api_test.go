package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/admit"
	"github.com/trawlerdev/trawler/internal/api"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/testenv"
	"github.com/trawlerdev/trawler/internal/testweb"
)

// readmeBlock returns the shell block of the README that follows marker, one command a line
// (continuations joined).
func readmeBlock(t *testing.T, marker string) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(raw)
	i := strings.Index(s, marker)
	if i < 0 {
		t.Fatalf("README has no %s block", marker)
	}
	block := s[i:]
	block = block[strings.Index(block, "```sh\n")+6:]
	block = block[:strings.Index(block, "```")]
	var out []string
	for _, line := range strings.Split(continuation.ReplaceAllString(block, ""), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			out = append(out, line)
		}
	}
	return out
}

// `trawler serve` answers the README's curl examples as written (only the address differs),
// requires its token, and explains bad requests in JSON.
func TestHTTPAPIAsTheReadmeShows(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.Pages, wc.Specials = 3, 8, false
	wc.DefaultDelay = 200 * time.Millisecond
	s := newStack(t, wc)
	run := s.start(crawl.Spec{Name: "news", Seeds: []string{"http://h0000.test/"}, Scope: crawl.ScopeAny,
		Delay: crawl.Duration(200 * time.Millisecond), ProgressInterval: crawl.Duration(time.Second),
		HostIdleTimeout: crawl.Duration(time.Minute), Recrawl: crawl.Recrawl{Interval: crawl.Duration(time.Hour)}})
	t.Cleanup(func() { _ = s.tc.TerminateWorkflow(t.Context(), run.GetID(), "", "test over") })

	bin := buildBinary(t, "trawler", "./starter")
	addr := testenv.FreeAddr(t)
	const token = "test-token"
	cmd := exec.Command(bin, "serve")
	cmd.Env = append(s.env(), "DATABASE_URL="+s.cfg.DatabaseURL, "TRAWLER_API_ADDR="+addr, "TRAWLER_API_TOKEN="+token)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	base := "http://" + addr
	waitFor(t, 20*time.Second, func() bool {
		resp, err := http.Get(base + "/api/v1/stats")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil
	})
	// Let the crawl fetch its seed and a few pages first.
	waitFor(t, 30*time.Second, func() bool { p, err := queryCrawl(s, run.GetID()); return err == nil && p.Pages >= 3 })

	curls := readmeBlock(t, "<!-- api-example")
	if len(curls) != 4 {
		t.Fatalf("README API examples: %v", curls)
	}
	answers := make([]string, len(curls))
	for i, line := range curls {
		line = strings.ReplaceAll(line, "http://127.0.0.1:8080", base)
		c := exec.Command("bash", "-c", line)
		c.Env = append(os.Environ(), "TRAWLER_API_TOKEN="+token)
		b, err := c.CombinedOutput()
		if err != nil || !json.Valid(b) {
			t.Fatalf("%s: %v\n%s\nserver: %s", line, err, b, out.String())
		}
		answers[i] = string(b)
	}
	var stats api.Stats
	_ = json.Unmarshal([]byte(answers[0]), &stats)
	if len(stats.Crawls) != 1 || stats.Crawls[0].CrawlID != "news" || stats.Crawls[0].Fetched < 3 || stats.Crawls[0].Admitted < 3 ||
		stats.Crawls[0].Throughput == nil || stats.Crawls[0].Throughput.Avg <= 0 || stats.Crawls[0].PagesPerSec != stats.Crawls[0].Throughput.Avg || stats.Hosts["active"]+stats.Hosts["idle"] == 0 {
		t.Errorf("stats: %s", answers[0])
	}
	var sub admit.SubmitResult
	_ = json.Unmarshal([]byte(answers[1]), &sub)
	if sub.Accepted != 1 || sub.Duplicates != 1 || sub.Rejected != 1 || len(sub.Reasons) != 1 {
		t.Errorf("submit: %s", answers[1])
	}
	var u api.URLAnalysis
	_ = json.Unmarshal([]byte(answers[2]), &u)
	if u.Normalized != "http://h0000.test/" || len(u.Crawls) != 1 || len(u.Crawls[0].Fetches) == 0 || u.Robots == nil ||
		u.Crawls[0].Document == nil || len(u.Crawls[0].OutLinks) == 0 || *u.Crawls[0].Fetches[0].Status != 200 {
		t.Errorf("url analysis: %s", answers[2])
	}
	var h struct {
		Fetched  int64                     `json:"fetched"`
		Crawls   map[string]map[string]int `json:"crawls"`
		Workflow *crawl.HostStatus         `json:"workflow"`
	}
	_ = json.Unmarshal([]byte(answers[3]), &h)
	if h.Fetched == 0 || h.Crawls["news"] == nil || h.Workflow == nil {
		t.Errorf("host analysis: %s", answers[3])
	}

	// Errors: no token, bad JSON, unknown crawl, bad URL, unknown endpoint — each a JSON message.
	for _, c := range []struct {
		method, path, body string
		auth               bool
		want               int
	}{
		{"GET", "/api/v1/stats", "", false, http.StatusUnauthorized},
		{"POST", "/api/v1/urls", "{not json", true, http.StatusBadRequest},
		{"POST", "/api/v1/urls", `{"crawl":"nope","urls":["http://h0000.test/"]}`, true, http.StatusNotFound},
		{"GET", "/api/v1/url?url=notaurl", "", true, http.StatusBadRequest},
		{"GET", "/api/v1/host", "", true, http.StatusBadRequest},
		{"GET", "/api/v2/anything", "", true, http.StatusNotFound},
		{"PUT", "/api/v1/urls", `{"crawl":"news","urls":["http://h0000.test/form"]}`, true, http.StatusUnsupportedMediaType}, // (a form post)
	} {
		method := c.method
		if method == "PUT" {
			method = "POST"
		}
		req, _ := http.NewRequest(method, base+c.path, strings.NewReader(c.body))
		if c.auth {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if c.method == "POST" {
			req.Header.Set("Content-Type", "application/json")
		} else if c.method == "PUT" {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var e struct{ Error string }
		err = json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if resp.StatusCode != c.want || err != nil || e.Error == "" {
			t.Errorf("%s %s: %d %q, want %d with a JSON error", c.method, c.path, resp.StatusCode, e.Error, c.want)
		}
	}
	if strings.Contains(out.String(), token) {
		t.Error("the server logged its token")
	}
	// Without a token it serves loopback only: any other address is refused at start.
	open := exec.Command(bin, "serve")
	open.Env = append(s.env(), "DATABASE_URL="+s.cfg.DatabaseURL, "TRAWLER_API_ADDR=0.0.0.0:0", "TRAWLER_API_TOKEN=")
	if b, err := open.CombinedOutput(); err == nil || !strings.Contains(string(b), "TRAWLER_API_TOKEN") {
		t.Errorf("serve on 0.0.0.0 without a token: %v\n%s", err, b)
	}
}
