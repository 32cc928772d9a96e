package e2e

import (
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/config"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/testweb"
)

// workerEnv is the environment of a worker process that joins this stack.
func (s *stack) workerEnv(roles string) []string {
	rules := make([]string, len(s.cfg.ConnectTo))
	for i, r := range s.cfg.ConnectTo {
		rules[i] = r.Pattern + "=" + r.Address
	}
	return append(s.env(), "DATABASE_URL="+s.cfg.DatabaseURL, "TRAWLER_S3_BUCKET="+s.cfg.S3Bucket,
		"TRAWLER_FETCH_TASK_QUEUE="+s.cfg.FetchTaskQueue, "TRAWLER_PROCESS_TASK_QUEUE="+s.cfg.ProcessTaskQueue,
		"TRAWLER_CONNECT_TO="+strings.Join(rules, ","), "TRAWLER_HEARTBEAT_MAX=1s", "TRAWLER_ROLES="+roles,
		"TRAWLER_SHUTDOWN_TIMEOUT=5s")
}

// startWorkerProcess runs trawler-worker with roles until the test ends (then SIGTERM).
func (s *stack) startWorkerProcess(t *testing.T, bin, roles string) {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Env = s.workerEnv(roles)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			t.Errorf("worker (%s) did not stop on SIGTERM within 15s", roles)
		}
		if t.Failed() {
			t.Logf("worker %s output:\n%s", roles, out.String())
		}
	})
}

// Politeness holds when three worker processes fetch for the same crawl: the host workflow,
// not the worker, is what spaces a host's requests.
func TestPolitenessWithThreeWorkerProcesses(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.Pages = 20, 8
	wc.DefaultDelay, wc.RetryAfter, wc.SlowRobots = 300*time.Millisecond, 2*time.Second, time.Second
	s := newStackWithoutWorkers(t, wc)
	bin := buildBinary(t, "trawler-worker", "./workers")
	s.startWorkerProcess(t, bin, config.RoleWorkflow+","+config.RoleProcess)
	s.startWorkerProcess(t, bin, config.RoleFetch)
	s.startWorkerProcess(t, bin, config.RoleFetch)
	s.startWorkerProcess(t, bin, config.RoleFetch)
	p := s.crawl(crawl.Spec{Seeds: s.web.Seeds(), Scope: crawl.ScopeAny, MaxPagesPerHost: 20,
		Delay: crawl.Duration(300 * time.Millisecond), BatchWindow: crawl.Duration(2 * time.Second),
		RequestTimeout: crawl.Duration(3 * time.Second), MaxBodyBytes: 2 << 20, MaxAttempts: 2,
		RetryBase: crawl.Duration(500 * time.Millisecond), HostIdleTimeout: crawl.Duration(10 * time.Second),
		ProgressInterval: crawl.Duration(time.Second)}, 4*time.Minute)
	rep := s.web.Audit().Report()
	t.Logf("crawl %+v", p)
	t.Logf("audit %+v", rep.Totals)
	if p.State != "done" || p.Fetched < 150 {
		t.Errorf("crawl: %+v", p)
	}
	if rep.Violations() != 0 || rep.Totals.Repeats != 0 || rep.Totals.UnknownHostRequests != 0 {
		t.Errorf("audit: %+v", rep.Totals)
	}
	if h := rep.Host("retry.test"); h == nil || h.RetryAfterViolations != 0 || h.Status["4xx"] == 0 {
		t.Errorf("retry.test: %+v", h)
	}
}
