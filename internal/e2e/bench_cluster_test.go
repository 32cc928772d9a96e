//go:build cluster

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// clusterSide is one side of `make bench-cluster`: what the other side's table needs.
type clusterSide struct {
	Pages                   int64
	Steady, Events, PGTrips float64
	Violations              int
	CPU                     map[string]float64 // seconds, by worker role or service node
}

// BenchmarkClusterLayout is `make bench-cluster` (issue 37), run twice by the Makefile: first
// on the single-node stack (BENCH_CLUSTER_SIDE=single, which saves its figures), then, with
// that stack down, on scripts/cluster.sh's cluster (=cluster, which writes the table). Both
// crawl the same web with the same worker processes (1 workflow, 2 fetch, 1 process) for
// BENCH_BUDGET_S, so the ratio is the layout's; and every node's CPU a page on the cluster
// is what sizing a real cluster needs (1 ms a page = 1 core per 1,000 pages/s).
func BenchmarkClusterLayout(b *testing.B) {
	o := envBenchOptions(b, 10000, 180)
	side := envOr("BENCH_CLUSTER_SIDE", "single")
	saved := filepath.Join(repoRoot(b), ".dev", "bench-cluster-single.json")
	layout, err := parseLayout("1+2+1")
	if err != nil {
		b.Fatal(err)
	}
	worker := buildBinary(b, "trawler-worker", "./workers")
	for range b.N {
		row := runTrawlerBench(b, worker, o, "cluster-"+side, layout)
		got := clusterSide{Pages: row.pages, Steady: row.steady, Events: row.events, PGTrips: row.pgTrips,
			Violations: row.violations, CPU: row.cpu}
		if side == "single" {
			data, _ := json.Marshal(got)
			if err := os.WriteFile(saved, data, 0o644); err != nil {
				b.Fatal(err)
			}
			continue
		}
		data, err := os.ReadFile(saved)
		if err != nil {
			b.Fatalf("the single-node side's figures (run it first): %v", err)
		}
		var single clusterSide
		if err := json.Unmarshal(data, &single); err != nil {
			b.Fatal(err)
		}
		report(b, clusterTable(o, single, got))
	}
}

func clusterTable(o benchOptions, single, cluster clusterSide) string {
	var sb strings.Builder
	host, _ := os.Hostname()
	fmt.Fprintf(&sb, "### Cluster layout against the single-node stack — %s\n\n", time.Now().UTC().Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(&sb, "`make bench-cluster` on %s (2 cores): the long-tailed test web (%d hosts, every %dth seeded), %v a side, "+
		"the same worker processes on both (1 workflow, 2 fetch, 1 process), the sides one after the other with the other stack down.\n\n",
		host, o.hosts, envInt("BENCH_SEED_EVERY", 0), o.budget)
	sb.WriteString("| stack | pages/s (steady) | pages | events a page | PG round trips a page | violations | CPU ms a page: workers | Temporal | PostgreSQL | MinIO | all |\n")
	sb.WriteString("|---|---|---|---|---|---|---|---|---|---|---|\n")
	row := func(name string, s clusterSide) float64 {
		ms := func(prefix ...string) float64 {
			var sum float64
			for k, v := range s.CPU {
				for _, p := range prefix {
					if strings.HasPrefix(k, p) {
						sum += v
					}
				}
			}
			return sum / float64(max(s.Pages, 1)) * 1000
		}
		w, t, p, m := ms("worker:"), ms("temporal"), ms("postgres", "pg-"), ms("minio")
		fmt.Fprintf(&sb, "| %s | %.0f | %d | %.2f | %.2f | %d | %.2f | %.2f | %.2f | %.2f | %.2f |\n",
			name, s.Steady, s.Pages, s.Events, s.PGTrips, s.Violations, w, t, p, m, w+t+p+m)
		return w + t + p + m
	}
	a := row("single node (`make up`: Temporal dev server on SQLite, PostgreSQL, MinIO)", single)
	c := row("cluster (`scripts/cluster.sh`: 3 Temporal nodes on PostgreSQL, 4 MinIO nodes, PostgreSQL primary + standby)", cluster)
	if single.Steady > 0 && a > 0 {
		fmt.Fprintf(&sb, "\nCluster ÷ single node: %.2f× the pages a second, %.2f× the CPU a page.\n", cluster.Steady/single.Steady, c/a)
	}
	sb.WriteString("\nEach node of the cluster: CPU ms a page, which is cores per 1,000 pages/s.\n\n")
	sb.WriteString("| node | ms a page = cores per 1,000 pages/s | cores for 10,000 pages/s |\n|---|---|---|\n")
	names := make([]string, 0, len(cluster.CPU))
	for k := range cluster.CPU {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		ms := cluster.CPU[k] / float64(max(cluster.Pages, 1)) * 1000
		fmt.Fprintf(&sb, "| %s | %.2f | %.1f |\n", k, ms, ms*10)
	}
	return sb.String()
}
