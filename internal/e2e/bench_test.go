package e2e

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/trawlerdev/trawler/internal/config"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/testenv"
	"github.com/trawlerdev/trawler/internal/testweb"
)

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v >= 0 {
		return v
	}
	return def
}

// BenchmarkCrawl is `make bench`: Trawler and the Colly peer (bench/colly) crawl the same test
// web (BENCH_HOSTS × BENCH_PAGES) for BENCH_BUDGET_S each, in a politeness-bound scenario
// (BENCH_DELAY_MS per host, with 1, 2 and 4 fetch worker processes: BENCH_FETCHERS) and a
// concurrency-bound one (no delay); the politeness-bound run with one fetcher is repeated on a
// Temporal server on PostgreSQL in place of the dev server (BENCH_TEMPORAL_PG=0 skips it;
// BENCH_TEMPORAL=postgres runs every scenario there).
// Workers run as separate processes so each one's CPU and peak RSS are its own, with their
// profiles on: a CPU profile of the workflow worker, a fetch worker and (on PostgreSQL) the
// Temporal server is taken over the steady window into BENCH_PROFILES (default
// .dev/bench-profiles) and its top functions logged. BENCH_KILL=1 SIGKILLs a fetch worker
// halfway through each Trawler run and starts another (its spending up to its death counts;
// its profile is lost). The report table goes to stdout and,
// with BENCH_REPORT=file, is appended to that file.
func BenchmarkCrawl(b *testing.B) {
	o := envBenchOptions(b, 2000, 60)
	b.Setenv("TRAWLER_PPROF", "true")
	var fetchers []int
	for _, f := range strings.Split(envOr("BENCH_FETCHERS", "1,2,4"), ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && n > 0 {
			fetchers = append(fetchers, n)
		}
	}
	worker := buildBinary(b, "trawler-worker", "./workers")
	peer := buildColly(b)
	// Every run on the server on PostgreSQL, or with retention's deletes unspread (Temporal
	// spreads them over 30 minutes, which a run of an hour would mostly miss): a server started
	// afresh for them, and the dev server back (its state kept) after.
	var dynamic []string
	if o.retention > 0 {
		dynamic = append(dynamic, `history.retentionTimerJitterDuration="1m"`)
	}
	if o.temporal == "postgres" || o.retention > 0 {
		restartTemporal(b, cmp.Or(o.temporal, "dev"), dynamic...)
		defer restartTemporal(b, "dev")
	}
	var rows []benchRow
	for i := 0; i < b.N; i++ {
		for _, n := range fetchers {
			rows = append(rows, runTrawlerBench(b, worker, o, "politeness-bound", fetchLayout(n)))
		}
		if envInt("BENCH_TEMPORAL_PG", 1) == 1 && o.temporal != "postgres" {
			restartTemporal(b, "postgres", dynamic...)
			pg := o
			pg.temporal = "postgres"
			rows = append(rows, runTrawlerBench(b, worker, pg, "politeness-bound", fetchLayout(fetchers[0])))
			restartTemporal(b, "dev", dynamic...)
		}
		if envInt("BENCH_COLLY", 1) == 1 {
			rows = append(rows, runCollyBench(b, peer, o, "politeness-bound"))
		}
		if envInt("BENCH_NO_DELAY", 1) == 1 {
			fast := o
			fast.delay = 0
			rows = append(rows, runTrawlerBench(b, worker, fast, "no delay", fetchLayout(fetchers[0])))
			if envInt("BENCH_COLLY", 1) == 1 {
				rows = append(rows, runCollyBench(b, peer, fast, "no delay"))
			}
		}
	}
	report(b, benchTable(o, rows))
}

// report prints a bench's table and, with BENCH_REPORT=file, appends it to that file.
func report(b *testing.B, table string) {
	fmt.Println(table)
	path := os.Getenv("BENCH_REPORT")
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("\n" + table); err != nil {
		b.Fatal(err)
	}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// envBenchOptions reads a bench's options from BENCH_* (BENCH_HOSTS and BENCH_BUDGET_S
// default to hosts and budgetS), with its profile directory made.
func envBenchOptions(b *testing.B, hosts, budgetS int) benchOptions {
	o := benchOptions{hosts: envInt("BENCH_HOSTS", hosts), pages: envInt("BENCH_PAGES", 50),
		delay: time.Duration(envInt("BENCH_DELAY_MS", 1000)) * time.Millisecond, budget: time.Duration(envInt("BENCH_BUDGET_S", budgetS)) * time.Second,
		profiles: envOr("BENCH_PROFILES", filepath.Join(repoRoot(b), ".dev", "bench-profiles")), kill: envInt("BENCH_KILL", 0) == 1,
		killEach: envInt("BENCH_KILL_EACH", 0) == 1, window: time.Duration(envInt("BENCH_WINDOW_S", 600)) * time.Second}
	if v := os.Getenv("BENCH_RETENTION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Hour {
			b.Fatalf("BENCH_RETENTION=%q: a duration of at least 1h (Temporal's shortest retention)", v)
		}
		o.retention = d
	}
	switch v := os.Getenv("BENCH_TEMPORAL"); v {
	case "", "dev":
	case "postgres":
		o.temporal = v
	default:
		b.Fatalf("BENCH_TEMPORAL=%q: dev (the default) or postgres", v)
	}
	if err := os.MkdirAll(o.profiles, 0o755); err != nil {
		b.Fatal(err)
	}
	return o
}

type benchOptions struct {
	hosts, pages  int
	delay, budget time.Duration
	temporal      string        // "" (the dev server) or "postgres"
	profiles      string        // directory for CPU profiles
	kill          bool          // SIGKILL a fetch worker halfway through the budget, and start another
	killEach      bool          // SIGKILL a worker of each role once (at 30%, 50%, 70% of the budget), and start another
	retention     time.Duration // the namespace's retention during the run (0: as it is)
	window        time.Duration // a long run's rate and cost are told window by window (bench_long_run_test.go)
}

// restartTemporal swaps the stack's Temporal for the dev server (its state kept: it may hold
// the developer's own crawls) or a server on PostgreSQL (with empty databases: an earlier
// bench's leftovers would load it at start), with the given dynamic config values (key=JSON
// value).
func restartTemporal(b *testing.B, flavour string, dynamic ...string) {
	cmd := exec.Command(filepath.Join(repoRoot(b), "scripts", "stack.sh"), "restart", "temporal")
	cmd.Env = append(os.Environ(), "TRAWLER_TEMPORAL="+flavour, "TRAWLER_TEMPORAL_DYNAMIC="+strings.Join(dynamic, " "))
	if flavour == "postgres" {
		cmd.Env = append(cmd.Env, "TRAWLER_TEMPORAL_RESET=1")
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("restart temporal (%s): %v\n%s", flavour, err, out)
	}
}

// profile takes a CPU profile of the process serving /debug/pprof at addr over the given
// window, starting after wait, saves it as file and logs its top functions.
func profile(b *testing.B, addr, bin, file string, wait, window time.Duration) *sync.WaitGroup {
	return takeProfile(b, "profile", addr, bin, file, wait, window)
}

// allocProfile takes the bytes the process allocated over the window (a delta allocation
// profile, beside its CPU profile): what feeds its collector, whose marking costs CPU too.
func allocProfile(b *testing.B, addr, bin, file string, wait, window time.Duration) *sync.WaitGroup {
	return takeProfile(b, "allocs", addr, bin, file, wait, window)
}

func takeProfile(b *testing.B, kind, addr, bin, file string, wait, window time.Duration) *sync.WaitGroup {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		time.Sleep(wait)
		client := http.Client{Timeout: window + 30*time.Second}
		resp, err := client.Get(fmt.Sprintf("http://%s/debug/pprof/%s?seconds=%d", addr, kind, int(window.Seconds())))
		if err != nil {
			b.Logf("profile %s: %v", file, err)
			return
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Logf("profile %s: %d %v", file, resp.StatusCode, err)
			return
		}
		if err := os.WriteFile(file, data, 0o644); err != nil {
			b.Logf("profile %s: %v", file, err)
			return
		}
		args, what := []string{"tool", "pprof", "-top", "-nodecount=25"}, "CPU profile"
		if kind == "allocs" {
			args, what = append(args, "-sample_index=alloc_space"), "allocation profile"
		}
		top, err := exec.Command("go", append(args, bin, file)...).CombinedOutput()
		if err != nil {
			b.Logf("pprof %s: %v", file, err)
		}
		b.Logf("%s %s:\n%s", what, file, top)
	}()
	return &wg
}

// benchRow is one crawler's run of one scenario.
type benchRow struct {
	scenario, crawler string
	layout            benchLayout
	pages             int64
	seconds           float64
	steady            float64 // pages/s over the last two thirds of the budget
	discovery         float64 // pages/s over the first third (the crawl finding its hosts)
	allowed           float64 // pages/s politeness allows on the hosts the crawl had found
	events            float64 // Temporal history events per fetched page
	cpu               map[string]float64
	rssMB             map[string]float64
	memory            []memorySample // the workers' memory over the run
	windows           string         // a long run's rate and cost window by window (bench_long_run_test.go)
	pgBytes, s3Bytes  float64        // per page
	s3Reqs, pgTrips   float64        // S3 requests and Postgres round trips of the workers, per page
	server            *serverCounts  // what the Temporal server did (nil: not measured)
	violations        int
}

func (r benchRow) perKPages(cpu float64) float64 {
	if r.pages == 0 {
		return 0
	}
	return cpu / float64(r.pages) * 1000
}

func benchWeb(o benchOptions) testweb.Config {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.Pages, wc.Specials, wc.DefaultDelay = o.hosts, o.pages, false, o.delay
	// BENCH_LONG_TAIL=1: hosts sized like the web's; BENCH_SEED_EVERY=n: every nth host seeded.
	wc.LongTail, wc.SeedEvery = envInt("BENCH_LONG_TAIL", 0) == 1, envInt("BENCH_SEED_EVERY", 0)
	wc.Tolerance = 20 * time.Millisecond
	return wc
}

// runTrawlerBench crawls with the worker processes of layout for the budget, then stops the
// crawl and reads the figures.
func runTrawlerBench(b *testing.B, bin string, o benchOptions, scenario string, layout benchLayout) benchRow {
	s := newStackWithoutWorkers(b, benchWeb(o))
	// The workers run as shipped: the tests' 1 s heartbeat cap (so that their pauses land
	// within a second) sends every running lease's heartbeat ten times as often as the
	// default, and heartbeats were the Temporal server's most frequent request.
	// Host runs' first leases are local (BENCH_LOCAL_LEASE, 10s; 0 runs every lease on the
	// fetch queue, as shipped).
	s.workerEnvExtra = []string{"TRAWLER_HEARTBEAT_MAX=", "TRAWLER_LOCAL_LEASE=" + cmp.Or(os.Getenv("BENCH_LOCAL_LEASE"), "10s")}
	if o.retention > 0 {
		restore, err := s.setRetention(context.Background(), cmp.Or(os.Getenv("TEMPORAL_NAMESPACE"), "default"), o.retention)
		if err != nil {
			b.Fatal(err)
		}
		defer restore()
	}
	services := serviceCPU(b)
	serverBefore, serverOK := scrapeServer()
	pgBefore, s3Before := s.databaseBytes(), s.bucketBytes()
	base := memorySample{cpu: services, deletes: serverBefore.deletes, dbBytes: pgBefore, walBytes: s.walPosition(context.Background()), steal: stealSeconds()}
	var workers []*workerProcess
	for _, roles := range layout {
		workers = append(workers, s.startWorkerProcess(b, bin, roles))
	}
	name := testenv.Unique("bench")
	// No delay is a millisecond: a zero Delay means the default (1 s).
	spec := crawl.Spec{Name: name, Seeds: s.web.Seeds(), Scope: crawl.ScopeAny, Delay: crawl.Duration(max(o.delay, time.Millisecond)),
		RetryBase: crawl.Duration(time.Second), ProgressInterval: crawl.Duration(5 * time.Second),
		// WARC files are written inside the measured window (the default, 10 minutes, is as
		// long as a whole run).
		WARC: crawl.WARC{MaxAge: crawl.Duration(min(2*time.Minute, o.budget/3))}}
	start := time.Now()
	run := s.start(spec)
	live := &liveWorkers{workers: slices.Clone(workers)}
	sampling, stopSampling := context.WithCancel(context.Background())
	crawler, label := "Trawler", strings.ReplaceAll(scenario, " ", "-")
	if o.temporal == "postgres" {
		crawler, label = "Trawler · Temporal on PostgreSQL", label+"-temporal-pg"
	}
	label = label + "-" + layout.label()
	var windows *windowLog // a long run's windows, written as each closes
	if o.window > 0 && o.budget >= 2*o.window {
		windows = newWindowLog(filepath.Join(o.profiles, label+"-windows.md"), scenario+", "+crawler+", workers "+layout.String(), base, o.window)
	}
	memory := sampleMemory(sampling, b, s, name, live, min(max(5*time.Second, o.budget/40), time.Minute), windows)
	// Profiles over the steady window (the last two thirds of the budget, less a margin).
	window := o.budget*2/3 - 5*time.Second
	var profiles []*sync.WaitGroup
	for _, role := range []string{config.RoleWorkflow, config.RoleFetch} {
		if i := layout.first(role); i >= 0 && (role == config.RoleWorkflow || i != layout.first(config.RoleWorkflow)) {
			profiles = append(profiles, profile(b, workers[i].metrics, bin, filepath.Join(o.profiles, label+"-"+role+"-worker.pprof"), o.budget/3, window),
				allocProfile(b, workers[i].metrics, bin, filepath.Join(o.profiles, label+"-"+role+"-worker-allocs.pprof"), o.budget/3, window))
		}
	}
	if o.temporal == "postgres" {
		profiles = append(profiles, profile(b, "127.0.0.1:7936", filepath.Join(repoRoot(b), ".tools", "bin", "temporal-server"),
			filepath.Join(o.profiles, label+"-temporal-server.pprof"), o.budget/3, window))
	}
	// BENCH_KILL: a fetch worker dies halfway (SIGKILL: its leases are retried elsewhere after
	// their heartbeat timeout) and a new one starts in its place; what the dead one spent counts.
	// BENCH_KILL_EACH: the last worker of each role dies in turn, each replaced.
	kills := map[int]time.Duration{}
	if w := layout.last(config.RoleFetch); o.kill && w >= 0 {
		kills[w] = o.budget / 2
	}
	if o.killEach {
		for i, role := range []string{config.RoleProcess, config.RoleFetch, config.RoleWorkflow} {
			if w := layout.last(role); w >= 0 {
				if _, ok := kills[w]; !ok {
					kills[w] = o.budget * time.Duration(3+2*i) / 10
				}
			}
		}
	}
	victims := make([]*killedWorker, len(workers))
	var killing sync.WaitGroup
	for i, at := range kills {
		killing.Go(func() {
			time.Sleep(at)
			v := killWorker(workers[i])
			v.replacement = s.startWorkerProcess(b, bin, layout[i])
			live.replace(workers[i], v.replacement)
			victims[i] = v
			b.Logf("killed worker %d (%s) at %v; started another", v.pid, layout[i], time.Since(start).Round(time.Second))
		})
	}
	discovery, steady := rates(s.web, o.budget)
	stopSampling()
	for _, wg := range profiles {
		wg.Wait()
	}
	killing.Wait()
	var killed []string
	for i, v := range victims {
		if v != nil {
			workers = append(workers, v.replacement)
			killed = append(killed, layout[i])
		}
	}
	switch {
	case len(killed) == 1 && killed[0] == config.RoleFetch && o.kill:
		scenario += " · a fetch worker killed halfway"
	case len(killed) > 0:
		scenario += " · a worker killed of each role (" + strings.Join(killed, "; ") + ")"
	}
	row := benchRow{scenario: scenario, crawler: crawler, layout: layout, cpu: map[string]float64{}, rssMB: map[string]float64{}, memory: memory()}
	row.windows = windowTable(scenario+", "+crawler+", workers "+layout.String(), base, row.memory, o.window)
	row.pages, row.seconds, row.steady, row.discovery = s.fetched(name), time.Since(start).Seconds(), steady, discovery
	for _, w := range workers {
		cpu, rss := procTree(w.cmd.Process.Pid)
		for _, v := range victims {
			if v != nil && w.cmd.Process.Pid == v.pid {
				cpu, rss = v.cpu, v.rss
			}
		}
		role := "worker:" + w.roles
		row.cpu[role] += cpu
		row.rssMB[role] = max(row.rssMB[role], rss)
	}
	for name, cpu := range serviceCPU(b) {
		row.cpu[name] = cpu - services[name]
	}
	if after, ok := scrapeServer(); ok && serverOK {
		d := after.minus(serverBefore)
		row.server = &d
	}
	// The budget is spent: the crawl stops (no request starts, no admission wakes a host), so
	// what is counted after this (events, round trips, requests) is the budget's, not a tail
	// of hosts started while the workflows are being terminated.
	if err := s.tc.SignalWorkflow(context.Background(), run.GetID(), "", crawl.SignalStop, nil); err != nil {
		b.Logf("stopping the crawl: %v", err)
	}
	stopCtx, stopCancel := context.WithTimeout(context.Background(), time.Minute)
	_ = run.Get(stopCtx, nil)
	stopCancel()
	for _, svc := range []string{"temporal", "postgres", "minio"} {
		if pid := servicePID(b, svc); pid > 0 {
			_, row.rssMB[svc] = procTree(pid)
		}
	}
	rep := s.web.Audit().Report()
	row.allowed, row.violations = allowedRate(s.web, rep, o.delay), rep.Violations()
	if row.pages == 0 || row.violations > 0 {
		b.Errorf("%s, workers %s: %d pages, %d politeness violations %+v", scenario, layout, row.pages, row.violations, rep.Totals)
		for _, h := range rep.Hosts {
			if h.GapViolations+h.ConcurrencyViolations+h.PagesBeforeRobots+h.Disallowed+h.RetryAfterViolations > 0 {
				b.Logf("host %s: %+v", h.Host, h)
				for _, r := range s.web.Audit().Requests(h.Host) {
					b.Logf("  %s %s %d, %v", r.Start.Format("15:04:05.000"), r.Path, r.Status, r.End.Sub(r.Start))
				}
			}
		}
		s.dumpPending()
	}
	// Stopped, the crawl's figures per page are final.
	s.terminateWorkflows()
	var s3Reqs, pgTrips, warcRecords float64
	for _, v := range victims {
		if v != nil {
			s3Reqs += v.metrics["trawler_s3_requests"]
			pgTrips += v.metrics["trawler_postgres_round_trips"]
			warcRecords += v.metrics["trawler_warc_records"]
		}
	}
	for _, w := range workers {
		if m, err := tryScrape(w.metrics); err == nil {
			s3Reqs += m["trawler_s3_requests"]
			pgTrips += m["trawler_postgres_round_trips"]
			warcRecords += m["trawler_warc_records"]
		}
	}
	b.Logf("WARC records written while the crawl ran: %.0f", warcRecords)
	var stopping sync.WaitGroup // each drains for up to its shutdown timeout: at once
	for _, w := range workers {
		stopping.Go(func() { w.stop(b) })
	}
	stopping.Wait()
	if pages := s.fetched(name); pages > 0 {
		row.pgBytes = float64(s.databaseBytes()-pgBefore) / float64(pages)
		row.s3Bytes = float64(s.bucketBytes()-s3Before) / float64(pages)
		total, events := s.eventsSampled(300)
		if envInt("BENCH_EVENTS_FULL", 0) == 1 { // cross-check: every history
			full := 0
			for _, n := range s.events() {
				full += n
			}
			b.Logf("history events: %d from visibility, %d reading every history", total, full)
		}
		row.events = float64(total) / float64(pages)
		row.s3Reqs, row.pgTrips = s3Reqs/float64(pages), pgTrips/float64(pages)
		b.Logf("events per page (%d in all; kinds from a sample of histories), most frequent: %s", total, topEvents(events, pages, 12))
		b.Logf("events per small host: %s", s.smallHostEvents())
	}
	b.Logf("%s, %s with workers %s: %d pages in %.0fs, %.1f pages/s steady, %.1f events/page, %d violations",
		scenario, crawler, layout, row.pages, row.seconds, row.steady, row.events, row.violations)
	return row
}

// killedWorker is what a worker killed mid-bench had spent, read just before its death.
type killedWorker struct {
	pid         int
	cpu, rss    float64
	metrics     map[string]float64
	replacement *workerProcess
}

// killWorker reads w's CPU, peak RSS and counters, then SIGKILLs it.
func killWorker(w *workerProcess) *killedWorker {
	k := &killedWorker{pid: w.cmd.Process.Pid}
	k.cpu, k.rss = procTree(k.pid)
	k.metrics, _ = tryScrape(w.metrics)
	_ = w.cmd.Process.Kill()
	_ = w.cmd.Wait()
	return k
}

// runCollyBench runs the Colly peer on a fresh test web of the same shape for the budget.
func runCollyBench(b *testing.B, bin string, o benchOptions, scenario string) benchRow {
	srv, _ := testenv.TestWeb(b, benchWeb(o))
	var out struct {
		Pages      int64   `json:"pages"`
		Seconds    float64 `json:"seconds"`
		CPUSeconds float64 `json:"cpuSeconds"`
		PeakRSSMB  float64 `json:"peakRssMb"`
	}
	cmd := exec.Command(bin, "--seeds", strings.Join(srv.Web.Seeds(), ","), "--connect-to", srv.ConnectTo(),
		"--user-agent", "TrawlerBot/1.0", "--delay", o.delay.String(), "--budget", o.budget.String())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	discovery, steady := rates(srv.Web, o.budget)
	if err := json.NewDecoder(stdout).Decode(&out); err != nil {
		b.Fatalf("colly peer: %v\n%s", err, stderr.String())
	}
	_ = cmd.Wait()
	rep := srv.Web.Audit().Report()
	row := benchRow{scenario: scenario, crawler: "Colly", pages: out.Pages, seconds: out.Seconds,
		steady: steady, discovery: discovery,
		cpu: map[string]float64{"worker:colly": out.CPUSeconds}, rssMB: map[string]float64{"worker:colly": out.PeakRSSMB},
		allowed: allowedRate(srv.Web, rep, o.delay), violations: rep.Violations()}
	b.Logf("%s, Colly: %d pages in %.0fs, %.1f requests/s steady, %d violations", scenario, row.pages, row.seconds, row.steady, row.violations)
	return row
}

// rates waits out the budget and returns the rates of requests the test web saw over its first
// third (discovery: the crawl finding its hosts) and its last two thirds (the steady state).
func rates(w *testweb.Web, budget time.Duration) (discovery, steady float64) {
	time.Sleep(budget / 3)
	atThird := w.Audit().Report().Totals.Requests
	time.Sleep(budget - budget/3)
	return float64(atThird) / (budget / 3).Seconds(),
		float64(w.Audit().Report().Totals.Requests-atThird) / (budget - budget/3).Seconds()
}

// allowedRate is the request rate politeness allows on the hosts the crawler has found:
// one request per required delay each; 0 (not bound by politeness) when the scenario sets none.
func allowedRate(w *testweb.Web, rep *testweb.Report, delay time.Duration) float64 {
	if delay <= 0 {
		return 0
	}
	var rate float64
	for _, h := range rep.Hosts {
		if d := w.RequiredDelay(h.Host); d > 0 {
			rate += float64(time.Second) / float64(d)
		}
	}
	return rate
}

func (s *stack) fetched(crawlID string) int64 {
	p, err := s.store.Crawls().CrawlProgress(context.Background(), crawlID)
	if err != nil {
		s.t.Fatal(err)
	}
	return p.Fetched
}

func (s *stack) databaseBytes() int64 {
	var n int64
	if err := s.store.Pool().QueryRow(context.Background(), `SELECT pg_database_size(current_database())`).Scan(&n); err != nil {
		s.t.Fatal(err)
	}
	return n
}

// bucketBytes is the disk the stack's bucket takes in the local MinIO's data directory.
func (s *stack) bucketBytes() int64 {
	var n int64
	_ = filepath.Walk(filepath.Join(repoRoot(s.t), ".dev", "minio", s.cfg.S3Bucket), func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			n += fi.Size()
		}
		return nil
	})
	return n
}

// servicePID is the PID scripts/stack.sh recorded for a service (0 if none).
func servicePID(tb testing.TB, name string) int {
	data, err := os.ReadFile(filepath.Join(repoRoot(tb), ".dev", "run", name+".pid"))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	return pid
}

// serviceCPU is the CPU seconds so far of each service of the stack and, when one is up, of
// each node of scripts/cluster.sh's cluster (temporal-1, minio-3, pg-2, …).
func serviceCPU(b testing.TB) map[string]float64 {
	out := map[string]float64{}
	for _, svc := range []string{"temporal", "postgres", "minio"} {
		if pid := servicePID(b, svc); pid > 0 {
			out[svc], _ = procTree(pid)
		}
	}
	files, _ := filepath.Glob(filepath.Join(repoRoot(b), ".dev", "cluster", "run", "*.pid"))
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".pid")
		if strings.HasPrefix(name, "worker-") {
			continue
		}
		data, _ := os.ReadFile(f)
		if pid, _ := strconv.Atoi(strings.TrimSpace(string(data))); pid > 0 {
			out[name], _ = procTree(pid)
		}
	}
	return out
}

// procTree is the CPU seconds (including reaped children) of pid and its descendants, and
// the largest peak RSS (MB) among them.
func procTree(pid int) (cpuSeconds, peakRSSMB float64) {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	stats := map[int][]string{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// Fields after the parenthesised command: state ppid … utime(14) stime cutime cstime.
		s := string(data)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) < 15 {
			continue
		}
		stats[p] = f
		ppid, _ := strconv.Atoi(f[1])
		children[ppid] = append(children[ppid], p)
	}
	todo := []int{pid}
	for len(todo) > 0 {
		p := todo[0]
		todo = append(todo[1:], children[p]...)
		f, ok := stats[p]
		if !ok {
			continue
		}
		for _, i := range []int{11, 12, 13, 14} {
			ticks, _ := strconv.ParseFloat(f[i], 64)
			cpuSeconds += ticks / 100 // USER_HZ
		}
		if status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p)); err == nil {
			for _, line := range strings.Split(string(status), "\n") {
				if kb, ok := strings.CutPrefix(line, "VmHWM:"); ok {
					v, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(kb), " kB"), 64)
					peakRSSMB = max(peakRSSMB, v/1024)
				}
			}
		}
	}
	return cpuSeconds, peakRSSMB
}

// buildColly builds the Colly peer from its own module.
func buildColly(b *testing.B) string {
	bin := filepath.Join(b.TempDir(), "colly-peer")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = filepath.Join(repoRoot(b), "bench", "colly")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("build the Colly peer: %v\n%s", err, out)
	}
	return bin
}

// benchTable renders the report as Markdown.
func benchTable(o benchOptions, rows []benchRow) string {
	host, _ := os.Hostname()
	cpuInfo := ""
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, "model name"); ok {
				cpuInfo = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "## %s — `make bench` (%s, %s, %d cores)\n\n", time.Now().UTC().Format("2006-01-02 15:04 MST"), host, cpuInfo, runtime.NumCPU())
	web := fmt.Sprintf("%d hosts × %d pages", o.hosts, o.pages)
	if wc := benchWeb(o); wc.LongTail {
		web = fmt.Sprintf("%d hosts, long-tailed (70%% with 1–5 pages, 25%% 6–200, 5%% 1,000–2,000)", o.hosts)
	}
	if wc := benchWeb(o); wc.SeedEvery > 0 {
		web += fmt.Sprintf(", every %dth host seeded", wc.SeedEvery)
	}
	fmt.Fprintf(&sb, "Test web %s; politeness-bound: %v per host; budget %v per run; everything co-located.\n\n", web, o.delay, o.budget)
	sb.WriteString("| scenario | crawler | worker processes | pages | requests/s discovery | requests/s steady | politeness use | events/page | CPU s/1k pages: workers · temporal · postgres · minio | peak RSS MB: workers · temporal · postgres · minio | PG B/page | S3 B/page | S3 req/page | PG round trips/page | violations |\n")
	sb.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		var wcpu, wrss float64
		for k, v := range r.cpu {
			if strings.HasPrefix(k, "worker:") {
				wcpu += v
			}
		}
		for k, v := range r.rssMB {
			if strings.HasPrefix(k, "worker:") {
				wrss = max(wrss, v)
			}
		}
		use := "—"
		if r.allowed > 0 {
			use = fmt.Sprintf("%.1f%%", 100*r.steady/r.allowed)
		}
		fmt.Fprintf(&sb, "| %s | %s | %s | %d | %.1f | %.1f | %s | %.2f | %.2f · %.2f · %.2f · %.2f | %.0f · %.0f · %.0f · %.0f | %.0f | %.0f | %.3f | %.2f | %d |\n",
			r.scenario, r.crawler, r.layout, r.pages, r.discovery, r.steady, use, r.events,
			r.perKPages(wcpu), r.perKPages(r.cpu["temporal"]), r.perKPages(r.cpu["postgres"]), r.perKPages(r.cpu["minio"]),
			wrss, r.rssMB["temporal"], r.rssMB["postgres"], r.rssMB["minio"], r.pgBytes, r.s3Bytes, r.s3Reqs, r.pgTrips, r.violations)
	}
	sb.WriteString("\n")
	sb.WriteString(serverTable(rows))
	for _, r := range rows {
		sb.WriteString(memoryTable(r.scenario+", "+r.crawler+", workers "+r.layout.String(), r.layout, r.memory))
		sb.WriteString(r.windows)
	}
	for _, scenario := range []string{"politeness-bound", "no delay"} {
		var t, c *benchRow
		for i := range rows {
			r := &rows[i]
			if r.scenario == scenario && strings.HasPrefix(r.crawler, "Trawler") && (t == nil || r.steady > t.steady) {
				t = r // the best Trawler row
			}
			if r.scenario == scenario && r.crawler == "Colly" {
				c = r
			}
		}
		if t == nil || c == nil || c.steady == 0 || c.pages == 0 || t.pages == 0 {
			continue
		}
		var total float64
		for _, v := range t.cpu {
			total += v
		}
		tc := t.perKPages(total)
		cc := c.perKPages(c.cpu["worker:colly"])
		fmt.Fprintf(&sb, "- %s: Trawler ÷ Colly = %.2f× pages/s (steady), %.1f× CPU per page (Trawler with its services; best Trawler row: %s, workers %s)\n",
			scenario, t.steady/c.steady, tc/cc, t.crawler, t.layout)
	}
	return sb.String()
}

// byWorkflow sums events by workflow type.
func byWorkflow(events map[eventKind]int) map[string]int {
	out := map[string]int{}
	for k, n := range events {
		out[k.workflow] += n
	}
	return out
}

type eventKind struct{ workflow, event string }

// smallHostEvents says what a host that fetched one or two pages cost in history events, all
// runs of its host workflow and its processing children together.
func (s *stack) smallHostEvents() string {
	byHost := map[string]int{}
	for _, e := range s.executions() {
		if host, ok := crawl.HostOf(e.Execution.WorkflowId); ok { // a host workflow or a processing child of one
			byHost[host] += int(e.HistoryLength)
		}
	}
	rows, err := s.store.Pool().Query(context.Background(), `SELECT u.host, count(*) FROM urls u JOIN fetches f ON f.crawl_id = u.crawl_id AND f.url_hash = u.url_hash
		WHERE f.error IS NULL GROUP BY u.host HAVING count(*) BETWEEN 1 AND 2`)
	if err != nil {
		return err.Error()
	}
	var counts []int
	for rows.Next() {
		var host string
		var n int
		if rows.Scan(&host, &n) == nil && byHost[host] > 0 {
			counts = append(counts, byHost[host])
		}
	}
	rows.Close()
	if len(counts) == 0 {
		return "no host fetched only one or two pages"
	}
	sort.Ints(counts)
	sum := 0
	for _, c := range counts {
		sum += c
	}
	return fmt.Sprintf("%d hosts with 1–2 pages: median %d events, mean %.1f, max %d", len(counts), counts[len(counts)/2],
		float64(sum)/float64(len(counts)), counts[len(counts)-1])
}

// events counts history events of the stack's workflows by workflow type and event type.
func (s *stack) events() map[eventKind]int {
	out := map[eventKind]int{}
	for _, e := range s.executions() {
		s.countHistory(e, out)
	}
	return out
}

// eventsSampled counts the stack's history events exactly from visibility (each closed run's
// history length) and their kinds from about n histories, scaled to the total: reading
// thousands of histories took longer than the crawl.
func (s *stack) eventsSampled(n int) (int, map[eventKind]int) {
	// Visibility records a terminated run's length a moment after terminating it.
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		resp, err := s.tc.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{
			Query: crawl.WorkflowQueues(s.cfg.TaskQueue) + " AND ExecutionStatus = 'Running'", PageSize: 1})
		if err == nil && len(resp.Executions) == 0 {
			break
		}
	}
	execs := s.executions()
	total := 0
	for _, e := range execs {
		total += int(e.HistoryLength)
	}
	kinds, sampled := map[eventKind]int{}, 0
	for i := 0; i < len(execs); i += max(1, len(execs)/n) {
		sampled += s.countHistory(execs[i], kinds)
	}
	if sampled > 0 {
		for k, v := range kinds {
			kinds[k] = v * total / sampled
		}
	}
	return total, kinds
}

func (s *stack) executions() []*workflowpb.WorkflowExecutionInfo {
	var out []*workflowpb.WorkflowExecutionInfo
	var token []byte
	for {
		resp, err := s.tc.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{
			Query: crawl.WorkflowQueues(s.cfg.TaskQueue), NextPageToken: token})
		if err != nil {
			s.t.Fatal(err)
		}
		out = append(out, resp.Executions...)
		if token = resp.NextPageToken; len(token) == 0 {
			return out
		}
	}
}

// countHistory adds a run's events by kind to out and returns how many it had.
func (s *stack) countHistory(e *workflowpb.WorkflowExecutionInfo, out map[eventKind]int) int {
	n := 0
	it := s.tc.GetWorkflowHistory(context.Background(), e.Execution.WorkflowId, e.Execution.RunId, false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			s.t.Fatal(fmt.Errorf("history of %s: %w", e.Execution.WorkflowId, err))
		}
		out[eventKind{e.Type.Name, strings.TrimPrefix(ev.EventType.String(), "EVENT_TYPE_")}]++
		n++
	}
	return n
}

// topEvents renders the most frequent kinds of event per fetched page.
func topEvents(events map[eventKind]int, pages int64, n int) string {
	kinds := make([]eventKind, 0, len(events))
	for k := range events {
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool { return events[kinds[i]] > events[kinds[j]] })
	var sb strings.Builder
	for i, k := range kinds {
		if i == n || pages == 0 {
			break
		}
		fmt.Fprintf(&sb, "%s %s %.2f; ", k.workflow, k.event, float64(events[k])/float64(pages))
	}
	return sb.String()
}
