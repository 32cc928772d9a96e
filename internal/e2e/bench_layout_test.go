package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/trawlerdev/trawler/internal/config"
)

// benchLayout is the worker processes a bench run starts: each entry is one process's roles
// (as TRAWLER_ROLES).
type benchLayout []string

// fetchLayout is the classic bench layout: one workflow+process worker and n fetch workers.
func fetchLayout(n int) benchLayout {
	l := benchLayout{config.RoleWorkflow + "," + config.RoleProcess}
	for range n {
		l = append(l, config.RoleFetch)
	}
	return l
}

// splitLayout is one process per role instance: w workflow, f fetch and p process workers.
func splitLayout(w, f, p int) benchLayout {
	var l benchLayout
	for range w {
		l = append(l, config.RoleWorkflow)
	}
	for range f {
		l = append(l, config.RoleFetch)
	}
	for range p {
		l = append(l, config.RoleProcess)
	}
	return l
}

// parseLayout reads "all" (one process with every role) or "W+F+P" (splitLayout).
func parseLayout(s string) (benchLayout, error) {
	if s == "all" {
		return benchLayout{config.RoleWorkflow + "," + config.RoleFetch + "," + config.RoleProcess}, nil
	}
	parts := strings.Split(s, "+")
	if len(parts) != 3 {
		return nil, fmt.Errorf("layout %q: want all or W+F+P", s)
	}
	var n [3]int
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 1 {
			return nil, fmt.Errorf("layout %q: %q is not a count of processes", s, p)
		}
		n[i] = v
	}
	return splitLayout(n[0], n[1], n[2]), nil
}

func (l benchLayout) has(i int, role string) bool {
	for _, r := range strings.Split(l[i], ",") {
		if r == role {
			return true
		}
	}
	return false
}

// first and last are the index of the first and last process serving role (-1: none).
func (l benchLayout) first(role string) int {
	for i := range l {
		if l.has(i, role) {
			return i
		}
	}
	return -1
}

func (l benchLayout) last(role string) int {
	for i := len(l) - 1; i >= 0; i-- {
		if l.has(i, role) {
			return i
		}
	}
	return -1
}

// String counts processes by roles, in order of first appearance: "workflow,process ×1 + fetch ×3".
func (l benchLayout) String() string {
	var order []string
	count := map[string]int{}
	for _, r := range l {
		if count[r] == 0 {
			order = append(order, r)
		}
		count[r]++
	}
	parts := make([]string, len(order))
	for i, r := range order {
		parts[i] = fmt.Sprintf("%s ×%d", r, count[r])
	}
	return strings.Join(parts, " + ")
}

// label names the layout in file names: "workflow.process1-fetch3".
func (l benchLayout) label() string {
	r := strings.NewReplacer(",", ".", " ×", "", " + ", "-")
	return r.Replace(l.String())
}

// BenchmarkScaling is `make bench-scale` (issue 18): a Temporal server on PostgreSQL, and the
// same politeness-bound web crawled by each layout of BENCH_LAYOUTS in turn (default "all"
// — one process with every role — then "1+3+2": one workflow, three fetch and two process
// workers), each for BENCH_BUDGET_S. BENCH_KILL_EACH=1 (the default here) SIGKILLs the last
// worker of each role once in a split layout, each replaced. Every run must keep politeness;
// the table goes where BenchmarkCrawl's does.
func BenchmarkScaling(b *testing.B) {
	o := envBenchOptions(b, 10000, 240)
	o.temporal = "postgres"
	b.Setenv("TRAWLER_PPROF", "true")
	var layouts []benchLayout
	for _, s := range strings.Split(envOr("BENCH_LAYOUTS", "all,1+3+2"), ",") {
		l, err := parseLayout(strings.TrimSpace(s))
		if err != nil {
			b.Fatal(err)
		}
		layouts = append(layouts, l)
	}
	worker := buildBinary(b, "trawler-worker", "./workers")
	restartTemporal(b, "postgres")
	defer restartTemporal(b, "dev")
	var rows []benchRow
	for range b.N {
		for _, l := range layouts {
			run := o
			run.kill, run.killEach = false, envInt("BENCH_KILL_EACH", 1) == 1 && len(l) > 1
			rows = append(rows, runTrawlerBench(b, worker, run, "politeness-bound", l))
		}
	}
	report(b, strings.Replace(benchTable(o, rows), "`make bench`", "`make bench-scale`", 1))
}
