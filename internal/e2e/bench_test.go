package e2e

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/testweb"
)

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// BenchmarkCrawl crawls a generic test web (BENCH_HOSTS × BENCH_PAGES, delay BENCH_DELAY_MS)
// and reports pages/s and Temporal history events per fetched page, by workflow type.
//
//	make bench   (or: go test -run XXX -bench Crawl -benchtime 1x ./internal/e2e/)
func BenchmarkCrawl(b *testing.B) {
	hosts, pages := envInt("BENCH_HOSTS", 20), envInt("BENCH_PAGES", 50)
	delay := time.Duration(envInt("BENCH_DELAY_MS", 100)) * time.Millisecond
	for i := 0; i < b.N; i++ {
		wc := testweb.DefaultConfig()
		wc.Hosts, wc.Pages, wc.Specials, wc.DefaultDelay = hosts, pages, false, delay
		s := newStack(b, wc)
		start := time.Now()
		// retryBase 1s: hosts whose robots.txt answers 503 give up after seconds, not minutes.
		p := s.crawl(crawl.Spec{Seeds: s.web.Seeds(), Scope: crawl.ScopeAny, Delay: crawl.Duration(delay),
			RetryBase: crawl.Duration(time.Second), ProgressInterval: crawl.Duration(time.Second),
			HostIdleTimeout: crawl.Duration(10 * time.Second)}, 30*time.Minute)
		elapsed := time.Since(start)
		byType := s.eventsByType()
		total := 0
		for _, n := range byType {
			total += n
		}
		b.ReportMetric(float64(p.Fetched)/elapsed.Seconds(), "pages/s")
		b.ReportMetric(float64(total)/float64(p.Fetched), "events/page")
		for typ, n := range byType {
			b.ReportMetric(float64(n)/float64(p.Fetched), typ+"-events/page")
		}
		if rep := s.web.Audit().Report(); rep.Violations() != 0 {
			b.Errorf("%d politeness violations: %+v", rep.Violations(), rep.Totals)
			for _, h := range rep.Hosts {
				if h.GapViolations+h.ConcurrencyViolations+h.Disallowed+h.RetryAfterViolations > 0 || !h.RobotsFirst {
					b.Logf("host %s: %+v", h.Host, h)
					for _, r := range s.web.Audit().Requests(h.Host) {
						b.Logf("  %s %s %d", r.Start.Format("15:04:05.000"), r.Path, r.Status)
					}
				}
			}
		}
		b.Logf("%d hosts × %d pages, delay %v: %d fetched in %v", hosts, pages, delay, p.Fetched, elapsed.Round(time.Millisecond))
	}
}

// eventsByType counts history events of the stack's workflows by workflow type.
func (s *stack) eventsByType() map[string]int {
	ctx := context.Background()
	out := map[string]int{}
	var token []byte
	for {
		resp, err := s.tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query: "TaskQueue = '" + s.cfg.TaskQueue + "'", NextPageToken: token})
		if err != nil {
			s.t.Fatal(err)
		}
		for _, e := range resp.Executions {
			it := s.tc.GetWorkflowHistory(ctx, e.Execution.WorkflowId, e.Execution.RunId, false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
			for it.HasNext() {
				if _, err := it.Next(); err != nil {
					s.t.Fatal(fmt.Errorf("history of %s: %w", e.Execution.WorkflowId, err))
				}
				out[e.Type.Name]++
			}
		}
		if token = resp.NextPageToken; len(token) == 0 {
			return out
		}
	}
}
