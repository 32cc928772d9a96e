package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/testenv"
	"github.com/trawlerdev/trawler/internal/testweb"
)

// BenchmarkRequisites states what page requisites cost a page (issue 48): the same crawl of
// a real documentation site (Python's HTML manual from Debian, served on loopback as
// docs.test), BENCH_REQ_PAGES (1,000) pages, with requisites off and then on, each by fresh
// worker processes (one workflow+process, one fetch) on the same stack. Per HTML page: the
// requests made (robots.txt included), the bytes fetched, and the CPU of the workers and of
// the services (Temporal, Postgres, MinIO).
func BenchmarkRequisites(b *testing.B) {
	docs := filepath.Join(repoRoot(b), pydocDir)
	if _, err := os.Stat(filepath.Join(docs, "index.html")); err != nil {
		b.Fatalf("the Python manual is not unpacked: run scripts/tools.sh (make up does): %v", err)
	}
	pages := envInt("BENCH_REQ_PAGES", 1000)
	var lines []string
	for range b.N {
		for _, on := range []bool{false, true} {
			wc := testweb.DefaultConfig()
			wc.Hosts, wc.Pages, wc.Specials, wc.DocsDir = 1, 2, false, docs
			wc.DefaultDelay = 5 * time.Millisecond
			spec := crawl.Spec{Name: testenv.Unique("req"), Seeds: []string{"http://" + testweb.DocsHost + "/"}, Scope: crawl.ScopeHost,
				Delay: crawl.Duration(wc.DefaultDelay), MaxPages: pages, ProgressInterval: crawl.Duration(2 * time.Second)}
			if !on {
				spec.Requisites = &crawl.Requisites{Off: true}
			}
			m := measureCrawl(b, wc, spec, nil, nil)
			s, workerCPU, serviceSum, wall := m.s, m.workerCPU, m.serviceCPU, m.wall
			var html, requests, requisites int
			var bytes int64
			if err := s.store.Pool().QueryRow(context.Background(), `SELECT
					(SELECT count(*) FROM documents WHERE crawl_id = $1),
					(SELECT count(*) FROM fetches WHERE crawl_id = $1 AND status IS NOT NULL),
					(SELECT count(*) FROM urls WHERE crawl_id = $1 AND source = 'embed'),
					(SELECT coalesce(sum(bytes), 0) FROM fetches WHERE crawl_id = $1)`, spec.Name).Scan(&html, &requests, &requisites, &bytes); err != nil {
				b.Fatal(err)
			}
			robotsAsked := 0
			for _, r := range s.web.Audit().Requests(testweb.DocsHost) {
				if r.Path == "/robots.txt" {
					robotsAsked++
				}
			}
			if v := s.web.Audit().Report().Violations(); v > 0 {
				b.Errorf("requisites bench: %d politeness violations", v)
			}
			mode := "off"
			if on {
				mode = "on"
			}
			per := float64(max(html, 1))
			lines = append(lines, fmt.Sprintf("| %s | %d | %d | %d | %.2f | %.1f | %.2f | %.2f | %s |", mode, html, requisites,
				requests+robotsAsked, float64(requests+robotsAsked)/per, float64(bytes)/per/1024, workerCPU/per*1000, serviceSum/per*1000,
				wall.Round(time.Second)))
			b.Log(lines[len(lines)-1])
		}
	}
	host, _ := os.Hostname()
	report(b, fmt.Sprintf("### What page requisites cost — %s\n\n`make bench-requisites` on %s: Python's HTML manual (python3.11-doc) on "+
		"loopback, %d pages, 5 ms delay, fresh worker processes (one workflow+process, one fetch) per run. Per HTML page: requests "+
		"(robots.txt included), KB fetched, CPU ms of the workers and of the services (Temporal, Postgres, MinIO).\n\n"+
		"| requisites | HTML pages | requisites archived | requests | requests/page | KB/page | workers CPU ms/page | services CPU ms/page | wall |\n"+
		"|---|---|---|---|---|---|---|---|---|\n%s\n",
		time.Now().UTC().Format("2006-01-02 15:04 MST"), host, pages, strings.Join(lines, "\n")))
}

// measuredCrawl is one crawl's cost: its stack, the CPU seconds of its worker processes and of
// the services (Temporal, Postgres, MinIO), and its wall time.
type measuredCrawl struct {
	s                     *stack
	workerCPU, serviceCPU float64
	wall                  time.Duration
}

// measureCrawl runs spec on a fresh stack of wc by fresh worker processes (one
// workflow+process, one fetch; env added to theirs), waits for it and then for after (nil:
// nothing more), and measures what the crawl cost.
func measureCrawl(b *testing.B, wc testweb.Config, spec crawl.Spec, env []string, after func(*stack)) measuredCrawl {
	b.Helper()
	s := newStackWithoutWorkers(b, wc)
	s.workerEnvExtra = env
	bin := buildBinary(b, "trawler-worker", "./workers")
	var workers []*workerProcess
	for _, roles := range fetchLayout(1) {
		workers = append(workers, s.startWorkerProcess(b, bin, roles))
	}
	services := serviceCPU(b)
	start := time.Now()
	if p := s.crawl(spec, 15*time.Minute); p.State != "done" {
		b.Fatalf("crawl: %+v", p)
	}
	if after != nil {
		after(s)
	}
	m := measuredCrawl{s: s, wall: time.Since(start)}
	for _, w := range workers {
		cpu, _ := procTree(w.cmd.Process.Pid)
		m.workerCPU += cpu
	}
	for name, cpu := range serviceCPU(b) {
		m.serviceCPU += cpu - services[name]
	}
	for _, w := range workers {
		w.stop(b)
	}
	return m
}
