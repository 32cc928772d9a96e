package e2e

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/trawlerdev/trawler/internal/blob"
	"github.com/trawlerdev/trawler/internal/config"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/runner"
	"github.com/trawlerdev/trawler/internal/store"
	"github.com/trawlerdev/trawler/internal/testenv"
	"github.com/trawlerdev/trawler/internal/testweb"
	"github.com/trawlerdev/trawler/workflows"
)

// stack is one isolated crawler on the real services: its own database, bucket and task
// queues, in-process workers for every role, and a test web.
type stack struct {
	t     testing.TB
	cfg   *config.Config
	store *store.Store
	tc    client.Client
	web   *testweb.Web
	srv   *testweb.Server
	blob  *blob.Store
	run   *runner.Runner
	// workerEnvExtra comes last in a worker process's environment, over the tests' settings.
	workerEnvExtra []string
}

func newStack(t testing.TB, webCfg testweb.Config) *stack {
	t.Helper()
	s := newStackWithoutWorkers(t, webCfg)
	s.startWorkers(s.cfg)
	return s
}

// newStackWithoutWorkers is a stack whose workers the test starts itself.
func newStackWithoutWorkers(t testing.TB, webCfg testweb.Config) *stack {
	t.Helper()
	srv, rules := testenv.TestWeb(t, webCfg)
	web := srv.Web
	cfg := testenv.Config(t)
	cfg.ConnectTo = rules
	testenv.TrustTestWeb(t, cfg, srv)
	cfg.HeartbeatMax = time.Second
	db, dbURL := testenv.Postgres(t)
	cfg.DatabaseURL = dbURL
	s := &stack{t: t, cfg: cfg, store: store.New(db), tc: testenv.Temporal(t), web: web, srv: srv, blob: testenv.Blob(t)}
	cfg.S3Bucket = s.blob.Bucket()
	t.Cleanup(s.terminateWorkflows)
	return s
}

// terminateWorkflows ends the test's host workflows, which would otherwise idle on in the
// shared dev server until their idle timeout with no worker to run them.
func (s *stack) terminateWorkflows() {
	ctx := context.Background()
	for range 20 { // a page at a time: terminating changes what the next page would hold
		resp, err := s.tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query: crawl.WorkflowQueues(s.cfg.TaskQueue) + " AND ExecutionStatus = 'Running'", PageSize: 1000})
		if err != nil || len(resp.Executions) == 0 {
			return
		}
		var terminated atomic.Int64
		var wg sync.WaitGroup
		sem := make(chan struct{}, 16) // a bench leaves a thousand hosts running
		for _, e := range resp.Executions {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				if s.tc.TerminateWorkflow(ctx, e.Execution.WorkflowId, e.Execution.RunId, "test finished") == nil {
					terminated.Add(1)
				}
			})
		}
		wg.Wait()
		if terminated.Load() == 0 { // visibility lags: these are already gone
			return
		}
	}
}

func (s *stack) startWorkers(cfg *config.Config) {
	r, err := runner.Start(s.tc, cfg, runner.Deps{DB: s.store.Pool(), Blob: s.blob})
	if err != nil {
		s.t.Fatal(err)
	}
	s.run = r
	s.t.Cleanup(r.Stop)
}

// crawl starts a crawl named after the test and waits for it to finish.
func (s *stack) crawl(spec crawl.Spec, timeout time.Duration) crawl.CrawlProgress {
	s.t.Helper()
	run := s.start(spec)
	return s.wait(run, timeout)
}

func (s *stack) start(spec crawl.Spec) client.WorkflowRun {
	s.t.Helper()
	if spec.Name == "" {
		spec.Name = testenv.Unique("c")
	}
	run, err := s.tc.ExecuteWorkflow(context.Background(), crawl.CrawlStart(s.cfg.IDPrefix, spec, s.cfg.TaskQueue),
		workflows.CrawlWorkflow, workflows.CrawlInput{Spec: spec})
	if err != nil {
		s.t.Fatal(err)
	}
	return run
}

func (s *stack) wait(run client.WorkflowRun, timeout time.Duration) crawl.CrawlProgress {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var p crawl.CrawlProgress
	if err := run.Get(ctx, &p); err != nil {
		s.dumpPending()
		s.t.Fatalf("crawl %s: %v", run.GetID(), err)
	}
	return p
}

// dumpPending logs what a crawl that did not finish is still waiting for.
func (s *stack) dumpPending() {
	rows, err := s.store.Pool().Query(context.Background(), `SELECT crawl_id, url, state, attempts, next_fetch_at,
		coalesce(claimed_until::text, ''), coalesce(last_error, '') FROM urls WHERE state IN ('queued', 'claimed', 'fetched')
		ORDER BY host LIMIT 40`)
	if err != nil {
		s.t.Logf("dump: %v", err)
		return
	}
	defer rows.Close()
	for rows.Next() {
		var c, u, st, claimed, lastErr string
		var attempts int
		var next time.Time
		_ = rows.Scan(&c, &u, &st, &attempts, &next, &claimed, &lastErr)
		s.t.Logf("pending: %s %s %s attempts=%d next=%s claimed=%s err=%q", c, u, st, attempts, next.Format(time.TimeOnly), claimed, lastErr)
	}
}

// urlRow is a URL of a crawl with its document, if it has one.
type urlRow struct {
	state                  crawl.URLState
	skip, lastErr          string
	priority               float32
	hasDoc, noindex        bool
	title, textKey, signal string
}

// urlRows reads every URL of a crawl, keyed by URL with prefix cut off.
func (s *stack) urlRows(crawlID, prefix string) map[string]urlRow {
	s.t.Helper()
	rows, err := s.store.Pool().Query(context.Background(), `SELECT u.url, u.state, coalesce(u.skip_reason, ''),
			coalesce(u.last_error, ''), u.priority, d.url_hash IS NOT NULL, coalesce(d.noindex, false), coalesce(d.title, ''),
			coalesce(d.text_key, ''), coalesce(d.robots_signal, '')
		FROM urls u LEFT JOIN documents d USING (crawl_id, url_hash) WHERE u.crawl_id = $1`, crawlID)
	if err != nil {
		s.t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]urlRow{}
	for rows.Next() {
		var u string
		var r urlRow
		if err := rows.Scan(&u, &r.state, &r.skip, &r.lastErr, &r.priority, &r.hasDoc, &r.noindex, &r.title, &r.textKey, &r.signal); err != nil {
			s.t.Fatal(err)
		}
		out[strings.TrimPrefix(u, prefix)] = r
	}
	if err := rows.Err(); err != nil {
		s.t.Fatal(err)
	}
	return out
}
