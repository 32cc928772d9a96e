package e2e

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/testenv"
	"github.com/trawlerdev/trawler/internal/testweb"
)

// BenchmarkStart is the bench of a crawl's start (issue 36; part of `make bench`, alone as
// `make bench-start`): BENCH_START_HOSTS hosts (1,000) of BENCH_START_PAGES pages (150: at the
// 1 s delay no host runs out within the budget, so the last third is the full rate, not the
// tail of hosts running dry, as it was at 50), every one seeded, crawled for
// BENCH_START_BUDGET_S (60 s) by make bench's worker processes (one workflow+process, one fetch), started and polling before the crawl is. Every 500 ms it reads
// the pages the test web has served, and reports the time to the first 1,000 pages, the steady
// rate (the last third of the budget), the time until the rate over 5 s first reached 80% of
// it, and the rate in each 5 s.
func BenchmarkStart(b *testing.B) {
	hosts, pages := envInt("BENCH_START_HOSTS", 1000), envInt("BENCH_START_PAGES", 150)
	budget := time.Duration(envInt("BENCH_START_BUDGET_S", 60)) * time.Second
	delay := time.Duration(envInt("BENCH_DELAY_MS", 1000)) * time.Millisecond
	var lines []string
	for range b.N {
		wc := testweb.DefaultConfig()
		wc.Hosts, wc.Pages, wc.Specials, wc.DefaultDelay, wc.SeedEvery = hosts, pages, false, delay, 1
		wc.Tolerance = 20 * time.Millisecond
		s := newStackWithoutWorkers(b, wc)
		s.workerEnvExtra = []string{"TRAWLER_HEARTBEAT_MAX="} // as shipped (see runTrawlerBench)
		bin := buildBinary(b, "trawler-worker", "./workers")
		var workers []*workerProcess
		for _, roles := range fetchLayout(1) {
			workers = append(workers, s.startWorkerProcess(b, bin, roles))
		}
		for _, w := range workers { // a deployment's workers are up before a crawl starts
			deadline := time.Now().Add(time.Minute)
			for !strings.Contains(w.out.String(), "worker started") && time.Now().Before(deadline) {
				time.Sleep(100 * time.Millisecond)
			}
		}
		time.Sleep(time.Second) // their first polls
		spec := crawl.Spec{Name: testenv.Unique("start"), Seeds: s.web.Seeds(), Scope: crawl.ScopeAny, Delay: crawl.Duration(delay),
			RetryBase: crawl.Duration(time.Second), ProgressInterval: crawl.Duration(5 * time.Second)}
		start := time.Now()
		s.start(spec)
		served := &progressSamples{at: []time.Duration{0}, count: []int64{0}} // nothing served before the start
		for time.Since(start) < budget {
			time.Sleep(500 * time.Millisecond)
			rep := s.web.Audit().Report()
			served.at = append(served.at, time.Since(start))
			served.count = append(served.count, int64(rep.Totals.Requests-robotsRequests(rep)))
		}
		rep := s.web.Audit().Report()
		if v := rep.Violations(); v > 0 {
			b.Errorf("start bench: %d politeness violations %+v", v, rep.Totals)
		}
		lines = append(lines, startLine(served, budget, rep.Violations())+"; "+firstRequests(s.web, rep, start))
		b.Log(lines[len(lines)-1])
		for _, w := range workers {
			w.stop(b)
		}
	}
	host, _ := os.Hostname()
	report(b, fmt.Sprintf("### The start of a crawl — %s\n\n`make bench-start` on %s: %d hosts × %d pages, every host seeded, "+
		"%v, one workflow+process and one fetch worker process, started before the crawl. Rates are pages the test web served.\n\n%s\n",
		time.Now().UTC().Format("2006-01-02 15:04 MST"), host, hosts, pages, budget, strings.Join(lines, "\n")))
}

// startLine reads the samples of one start: time to 1,000 pages, steady rate, time to 80% of it.
func startLine(served *progressSamples, budget time.Duration, violations int) string {
	at, rate := served.at, served.rate
	first := "not reached"
	for k, n := range served.count {
		if n >= 1000 {
			first = at[k].Round(100 * time.Millisecond).String()
			break
		}
	}
	steady := rate(budget*2/3, budget)
	to80 := "not reached"
	for _, a := range at {
		if a >= 5*time.Second && rate(a-5*time.Second, a) >= 0.8*steady {
			to80 = a.Round(100 * time.Millisecond).String()
			break
		}
	}
	var ticks []string
	for t := 5 * time.Second; t <= budget; t += 5 * time.Second {
		ticks = append(ticks, fmt.Sprintf("%.0f", rate(t-5*time.Second, t)))
	}
	return fmt.Sprintf("- first 1,000 pages after **%s**; steady %.0f pages/s (last third); 80%% of it (over 5 s) after **%s**; "+
		"%d violations. Pages/s in each 5 s: %s", first, steady, to80, violations, strings.Join(ticks, ", "))
}

// firstRequests says when the hosts' first three requests (robots.txt, the seed, the first page
// found on it) started, as quantiles over the hosts: where a slow start spends its time.
func firstRequests(w *testweb.Web, rep *testweb.Report, start time.Time) string {
	var parts []string
	for i, what := range []string{"robots.txt", "seed page", "first page found"} {
		var at []time.Duration
		for _, h := range rep.Hosts {
			if reqs := w.Audit().Requests(h.Host); len(reqs) > i {
				at = append(at, reqs[i].Start.Sub(start))
			}
		}
		if len(at) == 0 {
			continue
		}
		slices.Sort(at)
		q := func(f float64) string { return at[int(f*float64(len(at)-1))].Round(100 * time.Millisecond).String() }
		parts = append(parts, fmt.Sprintf("%s at %s / %s / %s (p10/p50/p90 of %d hosts)", what, q(0.1), q(0.5), q(0.9), len(at)))
	}
	return "hosts' " + strings.Join(parts, ", ")
}
