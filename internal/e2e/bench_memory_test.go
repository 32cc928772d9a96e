package e2e

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// memorySample is what the worker processes held at one moment of a bench run, beside how far
// the crawl had got: a worker's memory should follow neither the frontier nor the pages fetched.
type memorySample struct {
	at                time.Duration
	admitted, fetched int64
	rss, heap         map[string]float64 // MB by the worker's roles (the largest of a role)
	// What the run had spent so far, for its rate and cost window by window (bench_long_run_test.go):
	cpu      map[string]float64 // CPU seconds of the live workers ("workers") and each service
	deletes  float64            // workflow executions the Temporal server deleted (retention)
	failures float64            // activity attempts that failed (serverCounts.failures)
	dbBytes  int64              // the Postgres database's size
	walBytes float64            // WAL Postgres had written (its position), all databases
	steal    float64            // CPU seconds the hypervisor took from this machine (/proc/stat)
}

// liveWorkers is a bench run's worker processes as they are now (a killed one replaced).
type liveWorkers struct {
	mu      sync.Mutex
	workers []*workerProcess
}

func (l *liveWorkers) replace(old, new *workerProcess) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, w := range l.workers {
		if w == old {
			l.workers[i] = new
		}
	}
}

func (l *liveWorkers) list() []*workerProcess {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]*workerProcess(nil), l.workers...)
}

// sampleMemory reads, every interval until ctx ends, each live worker's resident set (VmRSS:
// now, not its peak) and Go heap in use, the crawl's admitted and fetched counts and the CPU
// spent so far; with windows (a long run), Temporal's deletes and the database's size too, each
// sample handed to windows. The returned function waits for the sampler and gives its samples.
func sampleMemory(ctx context.Context, tb testing.TB, s *stack, crawlID string, live *liveWorkers, every time.Duration, windows *windowLog) func() []memorySample {
	var out []memorySample
	done := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			m := memorySample{at: time.Since(start), rss: map[string]float64{}, heap: map[string]float64{}}
			p, err := s.store.Crawls().CrawlProgress(ctx, crawlID)
			if err != nil { // the run ended during the read
				continue
			}
			m.admitted, m.fetched = p.Admitted, p.Fetched
			m.cpu = serviceCPU(tb)
			// Temporal's deletes and the database's size, for a long run only (a scrape of the
			// server's metrics costs it CPU a short run would count); a failed read carries the
			// last one forward.
			if windows != nil {
				if len(out) > 0 {
					last := out[len(out)-1]
					m.deletes, m.failures, m.dbBytes, m.walBytes = last.deletes, last.failures, last.dbBytes, last.walBytes
				}
				m.steal = stealSeconds()
				if c, ok := scrapeServer(); ok {
					m.deletes, m.failures = c.deletes, c.failures
				}
				var size int64
				var wal float64
				if err := s.store.Pool().QueryRow(ctx, `SELECT pg_database_size(current_database()), (pg_current_wal_lsn() - '0/0')::float8`).Scan(&size, &wal); err == nil {
					m.dbBytes, m.walBytes = size, wal
				}
			}
			for _, w := range live.list() {
				cpu, _ := procTree(w.cmd.Process.Pid)
				m.cpu["workers"] += cpu
				m.rss[w.roles] = max(m.rss[w.roles], residentMB(w.cmd.Process.Pid))
				if metrics, err := tryScrape(w.metrics); err == nil {
					m.heap[w.roles] = max(m.heap[w.roles], metrics["go_memstats_heap_inuse_bytes"]/(1<<20))
				}
			}
			out = append(out, m)
			windows.observe(m)
		}
	}()
	return func() []memorySample {
		<-done
		return out
	}
}

// residentMB is a process's resident set now, in MB; 0 if it is gone.
func residentMB(pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.Fields(v + " 0")[0], 64)
			return kb / 1024
		}
	}
	return 0
}

// memoryTable renders a run's samples as Markdown (at most about a dozen rows, the last one
// always), with the growth between the run's second quarter and its end: what a worker keeps
// per URL admitted, if it keeps anything.
func memoryTable(label string, layout benchLayout, samples []memorySample) string {
	if len(samples) == 0 {
		return ""
	}
	var roles []string
	seen := map[string]bool{}
	for _, r := range layout {
		if !seen[r] {
			seen[r] = true
			roles = append(roles, r)
		}
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "Worker memory over the run (%s), RSS now and Go heap in use, MB, by worker role:\n\n", label)
	sb.WriteString("| minute | URLs admitted | pages fetched |")
	for _, r := range roles {
		fmt.Fprintf(&sb, " %s RSS · heap |", r)
	}
	sb.WriteString("\n|---|---|---|" + strings.Repeat("---|", len(roles)) + "\n")
	step := max(1, len(samples)/12)
	for i, m := range samples {
		if i%step != step-1 && i != len(samples)-1 {
			continue
		}
		fmt.Fprintf(&sb, "| %.1f | %d | %d |", m.at.Minutes(), m.admitted, m.fetched)
		for _, r := range roles {
			fmt.Fprintf(&sb, " %.0f · %.0f |", m.rss[r], m.heap[r])
		}
		sb.WriteString("\n")
	}
	from, to := samples[len(samples)/4], samples[len(samples)-1]
	if urls := to.admitted - from.admitted; urls > 0 {
		for _, r := range roles {
			grew := to.rss[r] - from.rss[r]
			fmt.Fprintf(&sb, "\n- %s: RSS %+.0f MB, heap %+.0f MB from minute %.1f to %.1f, while %d URLs were admitted and %d pages fetched (%.0f bytes of RSS per URL admitted)",
				r, grew, to.heap[r]-from.heap[r], from.at.Minutes(), to.at.Minutes(), urls, to.fetched-from.fetched, grew*(1<<20)/float64(urls))
		}
		sb.WriteString("\n")
	}
	return sb.String() + "\n"
}

// stealSeconds is the CPU time the hypervisor has taken from this machine since boot, over all
// cores (/proc/stat's steal, in USER_HZ ticks of 10 ms); 0 if unreadable. A window whose every
// process costs more a page with steal rising was the box, not the crawl.
func stealSeconds() float64 {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(data), "\n")
	f := strings.Fields(line) // cpu user nice system idle iowait irq softirq steal …
	if len(f) < 9 || f[0] != "cpu" {
		return 0
	}
	ticks, _ := strconv.ParseFloat(f[8], 64)
	return ticks / 100
}
