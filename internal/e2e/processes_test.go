package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/config"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/testenv"
	"github.com/trawlerdev/trawler/internal/testweb"
)

// workerEnv is the environment of a worker process that joins this stack.
func (s *stack) workerEnv(roles, metricsAddr string) []string {
	rules := make([]string, len(s.cfg.ConnectTo))
	for i, r := range s.cfg.ConnectTo {
		rules[i] = r.Pattern + "=" + r.Address
	}
	env := append(s.env(), "DATABASE_URL="+s.cfg.DatabaseURL, "TRAWLER_S3_BUCKET="+s.cfg.S3Bucket,
		"TRAWLER_FETCH_TASK_QUEUE="+s.cfg.FetchTaskQueue, "TRAWLER_PROCESS_TASK_QUEUE="+s.cfg.ProcessTaskQueue,
		"TRAWLER_RENDER_TASK_QUEUE="+s.cfg.RenderTaskQueue,
		"TRAWLER_CONNECT_TO="+strings.Join(rules, ","), "TRAWLER_CA_FILE="+s.cfg.CAFile, "TRAWLER_HEARTBEAT_MAX=1s", "TRAWLER_ROLES="+roles,
		"TRAWLER_SHUTDOWN_TIMEOUT=5s", "TRAWLER_METRICS_ADDR="+metricsAddr, "TRAWLER_LOG_FORMAT=json", "TRAWLER_LOG_LEVEL=info",
	)
	return append(env, s.workerEnvExtra...)
}

// workerProcess is a trawler-worker the test started.
type workerProcess struct {
	cmd     *exec.Cmd
	roles   string
	metrics string // host:port of its /metrics
	out     *strings.Builder
}

// startWorkerProcess runs trawler-worker with roles until stop or the end of the test
// (SIGTERM, which must drain it within 15 s).
func (s *stack) startWorkerProcess(t testing.TB, bin, roles string) *workerProcess {
	t.Helper()
	w := &workerProcess{roles: roles, metrics: testenv.FreeAddr(t), out: &strings.Builder{}}
	w.cmd = exec.Command(bin)
	w.cmd.Env = s.workerEnv(roles, w.metrics)
	var sink io.Writer = w.out
	if dir := os.Getenv("E2E_WORKER_LOGS"); dir != "" {
		// A long bench's workers, read while it runs (the output above is seen only at the end).
		name := fmt.Sprintf("%s-%d.log", strings.ReplaceAll(roles, ",", "+"), time.Now().UnixNano())
		if f, err := os.Create(filepath.Join(dir, name)); err == nil {
			sink = io.MultiWriter(w.out, f)
			t.Cleanup(func() { f.Close() })
		} else {
			t.Logf("worker log file: %v", err)
		}
	}
	w.cmd.Stdout, w.cmd.Stderr = sink, sink
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.stop(t) })
	return w
}

// exited says whether the process ended by itself (a zombie nobody waited for yet).
func (w *workerProcess) exited() bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", w.cmd.Process.Pid))
	if err != nil {
		return w.cmd.ProcessState != nil
	}
	// pid (comm) state ...: comm may hold spaces, so the state follows the last ')'.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}

func (w *workerProcess) stop(t testing.TB) {
	if w.cmd.ProcessState != nil {
		return
	}
	_ = w.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- w.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = w.cmd.Process.Kill()
		t.Errorf("worker (%s) did not stop on SIGTERM within 15s", w.roles)
	}
	if t.Failed() {
		t.Logf("worker %s output:\n%s", w.roles, w.out.String())
	}
}

// scrape reads a Prometheus text endpoint: the sum of each series' samples by metric name
// (histograms by their _count), and the names seen.
func scrape(t *testing.T, addr string) map[string]float64 {
	t.Helper()
	m, err := tryScrape(addr)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func tryScrape(addr string) (map[string]float64, error) {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", addr, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	out := map[string]float64{}
	for _, line := range strings.Split(string(body), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, rest, _ := strings.Cut(line, " ")
		if i := strings.IndexByte(name, '{'); i >= 0 {
			if j := strings.LastIndexByte(line, '}'); j > i {
				name, rest = line[:i], strings.TrimSpace(line[j+1:])
			}
		}
		v, err := strconv.ParseFloat(strings.Fields(rest + " 0")[0], 64)
		if err == nil {
			out[name] += v
		}
	}
	return out, nil
}

// The scaling recipe — 1 workflow worker, 2 fetch workers and 1 process worker as separate
// processes — crawls the test web with the same results as one process serving every role,
// politely; and each process's metrics endpoint reports what it did, agreeing with the audit.
func TestScalingRecipeMatchesOneProcess(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.Pages = 20, 8
	wc.DefaultDelay, wc.RetryAfter, wc.SlowRobots = 300*time.Millisecond, 2*time.Second, time.Second
	s := newStackWithoutWorkers(t, wc)
	bin := buildBinary(t, "trawler-worker", "./workers")
	spec := func(name string) crawl.Spec {
		return crawl.Spec{Name: name, Seeds: s.web.Seeds(), Scope: crawl.ScopeAny, MaxPagesPerHost: 20,
			Delay: crawl.Duration(300 * time.Millisecond), BatchWindow: crawl.Duration(2 * time.Second),
			RequestTimeout: crawl.Duration(3 * time.Second), MaxBodyBytes: 2 << 20, MaxAttempts: 2,
			RetryBase: crawl.Duration(500 * time.Millisecond), HostIdleTimeout: crawl.Duration(10 * time.Second),
			ProgressInterval: crawl.Duration(time.Second)}
	}

	one := s.startWorkerProcess(t, bin, config.RoleWorkflow+","+config.RoleFetch+","+config.RoleProcess)
	single := s.crawl(spec("single"), 4*time.Minute)
	one.stop(t)
	s.web.Audit().Reset()

	wf := s.startWorkerProcess(t, bin, config.RoleWorkflow)
	fetchers := []*workerProcess{s.startWorkerProcess(t, bin, config.RoleFetch), s.startWorkerProcess(t, bin, config.RoleFetch)}
	proc := s.startWorkerProcess(t, bin, config.RoleProcess)
	run := s.start(spec("recipe"))
	// Mid-crawl, the workflow worker's frontier gauge shows queued URLs.
	var frontier float64
	waitFor(t, time.Minute, func() bool {
		m, err := tryScrape(wf.metrics)
		frontier = m["trawler_frontier_urls"]
		return err == nil && frontier > 0
	})
	recipe := s.wait(run, 4*time.Minute)
	rep := s.web.Audit().Report()
	t.Logf("one process: %+v", single)
	t.Logf("recipe:      %+v", recipe)
	t.Logf("audit of the recipe crawl: %+v", rep.Totals)
	// Which links of a host past MaxPagesPerHost are admitted follows the order its pages are
	// processed in (earlier candidates take the room, the rest are skipped "budget"), and that
	// order differs from run to run: the two crawls' pages are compared on the hosts neither
	// ran out of budget on, and on those that did only by how many were fetched (Fetched).
	sameOutsideBudget := pagesOutsideBudget(t, s, "single") == pagesOutsideBudget(t, s, "recipe")
	if recipe.State != "done" || recipe.Fetched < 150 || recipe.Fetched != single.Fetched || !sameOutsideBudget ||
		recipe.Dead != single.Dead || recipe.Admitted != single.Admitted {
		t.Errorf("the recipe's crawl differs from one process's")
		logDocumentDiff(t, s, "single", "recipe")
	}
	// (robots.txt is cached from the first crawl, so the audit's robots-first rule does not apply)
	if tot := rep.Totals; tot.GapViolations+tot.ConcurrencyViolations+tot.Disallowed+tot.RetryAfterViolations+tot.Repeats+tot.UnknownHostRequests != 0 {
		t.Errorf("audit: %+v", rep.Totals)
	}
	for c, pages := range map[string]int64{"single": single.Pages, "recipe": recipe.Pages} {
		var docs int
		_ = s.store.Pool().QueryRow(context.Background(), `SELECT count(*) FROM documents WHERE crawl_id = $1`, c).Scan(&docs)
		if int64(docs) != pages {
			t.Errorf("crawl %s stored %d documents, its progress says %d pages", c, docs, pages)
		}
	}

	// Metrics: every process serves its role's series, non-zero, agreeing with the audit.
	time.Sleep(2 * time.Second) // tally reports to the registry every second
	fetched := map[string]float64{}
	for _, f := range fetchers {
		for k, v := range scrape(t, f.metrics) {
			fetched[k] += v
		}
	}
	pages := float64(rep.Totals.Requests - robotsRequests(rep))
	if fetched["trawler_fetches"] != pages || fetched["trawler_fetch_latency_count"] != pages {
		t.Errorf("fetch workers counted %v fetches (%v timed); the audit saw %v page requests",
			fetched["trawler_fetches"], fetched["trawler_fetch_latency_count"], pages)
	}
	for _, name := range []string{"trawler_fetch_bytes", "trawler_robots_fetches", "trawler_robots_blocked", "trawler_retries",
		"trawler_dead_letters", "temporal_activity_execution_latency_count", "temporal_request", "go_goroutines"} {
		if fetched[name] <= 0 {
			t.Errorf("fetch workers' %s = %v", name, fetched[name])
		}
	}
	processed := scrape(t, proc.metrics)
	if processed["trawler_documents"] != float64(recipe.Pages) {
		t.Errorf("process worker counted %v documents, crawl stored %d", processed["trawler_documents"], recipe.Pages)
	}
	for _, name := range []string{"trawler_duplicates", "trawler_links_admitted", "trawler_links_seen", "trawler_links_rejected", "trawler_warc_records"} {
		if processed[name] <= 0 {
			t.Errorf("process worker's %s = %v", name, processed[name])
		}
	}
	// The crawl includes hostile.test (gzip bomb, 25 MB page, drip feed, …): every worker's peak
	// RSS stays under 512 MB.
	for _, w := range []*workerProcess{wf, fetchers[0], fetchers[1], proc} {
		if peak := peakRSS(t, w.cmd.Process.Pid); peak == 0 || peak > 512<<20 {
			t.Errorf("worker %s peak RSS %d MiB", w.roles, peak>>20)
		} else {
			t.Logf("worker %s peak RSS %d MiB", w.roles, peak>>20)
		}
	}

	// Logs: JSON lines with crawl and host fields, and no secret anywhere.
	batchLogs := 0
	for _, w := range []*workerProcess{wf, fetchers[0], fetchers[1], proc} {
		if strings.Contains(w.out.String(), s.cfg.S3SecretKey) {
			t.Errorf("worker %s logged the S3 secret key", w.roles)
		}
		for _, line := range strings.Split(strings.TrimSpace(w.out.String()), "\n") {
			var rec map[string]any
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Errorf("worker %s logged a line that is not JSON: %q", w.roles, line)
				break
			}
			if rec["msg"] == "fetch lease done" && rec["host"] != nil && rec["crawl"] == "recipe" {
				batchLogs++
			}
		}
	}
	if batchLogs == 0 {
		t.Error("no fetch lease log line with host and crawl fields")
	}
	if w := scrape(t, wf.metrics); w["temporal_workflow_completed"] <= 0 {
		t.Errorf("workflow worker: temporal_workflow_completed = %v", w["temporal_workflow_completed"])
	}
}

func robotsRequests(rep *testweb.Report) int {
	n := 0
	for _, h := range rep.Hosts {
		n += h.RobotsRequests
	}
	return n
}

// peakRSS reads a process's peak resident set (VmHWM) in bytes; 0 if unknown.
func peakRSS(t *testing.T, pid int) int64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Logf("peak RSS of %d: %v", pid, err)
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// pagesOutsideBudget counts crawl's documents on the hosts on which neither crawl of this test
// skipped a link for the host's page budget.
func pagesOutsideBudget(t *testing.T, s *stack, crawl string) int {
	t.Helper()
	var n int
	err := s.store.Pool().QueryRow(context.Background(), `
		SELECT count(*) FROM documents d JOIN urls u ON u.crawl_id = d.crawl_id AND u.url_hash = d.url_hash
		WHERE d.crawl_id = $1 AND u.host NOT IN (
			SELECT host FROM urls WHERE crawl_id IN ('single', 'recipe') AND skip_reason = 'budget')`, crawl).Scan(&n)
	if err != nil {
		t.Fatalf("pages outside the budget of %s: %v", crawl, err)
	}
	t.Logf("crawl %s: %d pages on hosts within their budget", crawl, n)
	return n
}

// logDocumentDiff names the URLs that have a document in one crawl and not the other, with
// what the crawl recorded for them, so a difference says which page and why.
func logDocumentDiff(t *testing.T, s *stack, a, b string) {
	t.Helper()
	rows, err := s.store.Pool().Query(context.Background(), `
		SELECT u.crawl_id, u.url, u.state, coalesce(u.last_status, 0), coalesce(u.last_error, ''), u.attempts
		FROM urls u
		WHERE u.crawl_id IN ($1, $2)
		  AND EXISTS (SELECT 1 FROM documents d WHERE d.crawl_id = u.crawl_id AND d.url_hash = u.url_hash)
		      <> EXISTS (SELECT 1 FROM urls o JOIN documents d ON d.crawl_id = o.crawl_id AND d.url_hash = o.url_hash
		                 WHERE o.crawl_id = CASE WHEN u.crawl_id = $1 THEN $2 ELSE $1 END AND o.url = u.url)`, a, b)
	if err != nil {
		t.Logf("document diff: %v", err)
		return
	}
	defer rows.Close()
	for rows.Next() {
		var crawlID, url, state, lastErr string
		var status, attempts int
		if err := rows.Scan(&crawlID, &url, &state, &status, &lastErr, &attempts); err != nil {
			t.Logf("document diff: %v", err)
			return
		}
		t.Logf("only one crawl stored it — as seen by %s: %s state=%s status=%d attempts=%d error=%q",
			crawlID, url, state, status, attempts, lastErr)
	}
}
