package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/failpoint"
	"github.com/trawlerdev/trawler/internal/testenv"
	"github.com/trawlerdev/trawler/internal/testweb"
)

// recoveryBound is the README's promise (Resilience), with room for a slow box: after a worker
// dies, what it held (claimed or fetched URLs) is fetched or processed again within this
// time. That its hosts wake again shows as both crawls finishing with nothing pending; the
// samples log any host sitting on due URLs, for a reader of a slow run.
// killGap spaces the test's deaths by about one recovery (a fetch lease's 30 s heartbeat
// timeout, a 2 s retry), so each death is recovered from before the next.
const (
	recoveryBound = 45 * time.Second
	killGap       = 32 * time.Second
)

// supervised is a worker process of one role that the test can arm with a failpoint: it is
// restarted (gracefully) armed, dies there, and is restarted unarmed at once.
type supervised struct {
	s     *stack
	bin   string
	roles string
	t     *testing.T

	mu   sync.Mutex
	cur  *exec.Cmd
	out  lockedBuffer // every process of the role writes here, an old one's last lines too
	stop bool
}

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func superviseWorker(t *testing.T, s *stack, bin, roles string) *supervised {
	w := &supervised{s: s, bin: bin, roles: roles, t: t}
	w.launch("")
	t.Cleanup(func() {
		w.mu.Lock()
		w.stop = true
		cmd := w.cur
		w.mu.Unlock()
		_ = cmd.Process.Signal(syscall.SIGTERM)
		waitExit(t, cmd, roles)
		if t.Failed() {
			t.Logf("worker %s output (tail):\n%s", roles, tail(w.out.String(), 6000))
		}
	})
	return w
}

func (w *supervised) launch(point string) *exec.Cmd {
	cmd := exec.Command(w.bin)
	cmd.Env = append(w.s.workerEnv(w.roles, testenv.FreeAddr(w.t)), failpoint.EnvVar+"="+point)
	cmd.Stdout, cmd.Stderr = &w.out, &w.out
	if err := cmd.Start(); err != nil {
		panic(fmt.Sprintf("start worker %s: %v", w.roles, err)) // (from the kill schedule's goroutine too)
	}
	w.mu.Lock()
	w.cur = cmd
	w.mu.Unlock()
	return cmd
}

func waitExit(t *testing.T, cmd *exec.Cmd, roles string) {
	done := make(chan struct{})
	go func() { _, _ = cmd.Process.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		t.Errorf("worker %s did not stop on SIGTERM", roles)
	}
}

// killAt restarts the worker armed with point and waits until it dies there (true), or until
// within or abort (false: the point was not reached, and the worker runs on unarmed).
func (w *supervised) killAt(point string, within time.Duration, abort <-chan struct{}) bool {
	w.mu.Lock()
	old := w.cur
	w.mu.Unlock()
	_ = old.Process.Signal(syscall.SIGTERM)
	waitExit(w.t, old, w.roles)
	armed := w.launch(point)
	died := make(chan struct{})
	go func() { _, _ = armed.Process.Wait(); close(died) }()
	select {
	case <-died:
		time.Sleep(time.Second) // dead for a moment: its tasks must move
		w.mu.Lock()
		stopped := w.stop
		w.mu.Unlock()
		if !stopped {
			w.launch("")
		}
		return true
	case <-abort:
	case <-time.After(within):
	}
	_ = armed.Process.Signal(syscall.SIGTERM)
	select {
	case <-died:
	case <-time.After(20 * time.Second):
		_ = armed.Process.Kill()
		w.t.Errorf("worker %s did not stop on SIGTERM", w.roles)
	}
	w.launch("")
	return false
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// TestRecoveryAfterKillsAtWorstMoments kills each role at the moments that lose the most (a
// claim committed but not recorded, a top-up claimed, a page recorded but not heartbeated, a
// batch done but not reported, links admitted but hosts not woken, a document saved, a
// processing batch done but not reported) and starts a second crawl of the same hosts right
// after the kills. Both crawls must end, each within the recovery bound of the last death.
func TestRecoveryAfterKillsAtWorstMoments(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.Pages, wc.Specials = 24, 30, false
	wc.DefaultDelay = 200 * time.Millisecond
	s := newStackWithoutWorkers(t, wc)
	s.workerEnvExtra = []string{"TRAWLER_LOCAL_LEASE=10s"} // host runs' first leases in the workflow worker
	bin := buildBinary(t, "trawler-worker", "./workers")
	workers := map[string]*supervised{}
	for _, role := range []string{"workflow", "fetch", "process"} {
		workers[role] = superviseWorker(t, s, bin, role)
	}
	spec := func(name string) crawl.Spec {
		return crawl.Spec{Name: name, Seeds: s.web.Seeds(), Scope: crawl.ScopeAny, MaxPagesPerHost: wc.Pages + 10,
			Delay: crawl.Duration(wc.DefaultDelay), BatchWindow: crawl.Duration(3 * time.Second),
			RequestTimeout: crawl.Duration(3 * time.Second), MaxAttempts: 3, RetryBase: crawl.Duration(500 * time.Millisecond),
			HostIdleTimeout: crawl.Duration(30 * time.Second), ProgressInterval: crawl.Duration(time.Second)}
	}
	start := time.Now()
	first := s.start(spec(testenv.Unique("first")))
	// One death at a time, each given the recovery bound before the next, so every death's
	// recovery is measured on its own; the second crawl of the same hosts starts right after
	// the first death. Each role dies within the first three deaths (the crawls end sooner
	// than the schedule does). The workflow worker dies first at a host run's local lease's
	// claim (revision 6: it holds the host's claims until the workflow task times out, 30 s,
	// and the task's next attempt takes them back), later in the middle of a crawl
	// workflow's task.
	schedule := []struct{ role, point string }{
		{"fetch", failpoint.TopUpClaimed + "#1"},
		{"workflow", failpoint.ClaimCommitted + "#1"},
		{"process", failpoint.LinksAdmitted + "#1"},
		{"workflow", failpoint.ProgressRead + "#2"},
		{"fetch", failpoint.FetchRecorded + "#2"},
		{"process", failpoint.ProcessFinishing + "#1"},
		{"fetch", failpoint.BatchFetched + "#1"},
		{"process", failpoint.DocumentSaved + "#1"},
	}
	var deaths []string
	var lastDeath time.Time
	secondRun := make(chan client.WorkflowRun, 1)
	killsDone, crawlsDone := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(killsDone)
		for i, k := range schedule {
			if !lastDeath.IsZero() {
				select {
				case <-crawlsDone:
					return
				case <-time.After(time.Until(lastDeath.Add(killGap))):
				}
			}
			// Up to 40 s for the point to be reached: a restarted process worker gets its
			// leases' processing back only after their heartbeat timeout (20 s).
			if workers[k.role].killAt(k.point, 40*time.Second, crawlsDone) {
				lastDeath = time.Now()
				deaths = append(deaths, fmt.Sprintf("%5.1fs %s at %s", time.Since(start).Seconds(), k.role, k.point))
			} else {
				deaths = append(deaths, fmt.Sprintf("%5.1fs %s at %s: not reached", time.Since(start).Seconds(), k.role, k.point))
			}
			if i == 0 {
				secondRun <- s.start(spec(testenv.Unique("second")))
			}
		}
	}()
	second := <-secondRun
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	ended := map[string]time.Time{}
	var wg sync.WaitGroup
	// What the frontier holds every 2 s: per state, how many URLs and how long the oldest has
	// waited in it (queued: since due). A URL held by a dead worker shows as an old claimed or
	// fetched one until its recovery.
	var samples []string
	var oldestHeld time.Duration // claimed or fetched
	sampleDone := make(chan struct{})
	go func() {
		defer close(sampleDone)
		for ctx.Err() == nil && len(samples) < 300 {
			var line string
			var held float64
			_ = s.store.Pool().QueryRow(ctx, `SELECT coalesce(string_agg(format('%s=%s (oldest %ss)', state, n, round(age)), ' ' ORDER BY state), ''),
					coalesce(max(age) FILTER (WHERE state <> 'queued'), 0) FROM
				(SELECT state, count(*) n, extract(epoch FROM max(now() - CASE WHEN state = 'queued' THEN greatest(next_fetch_at, updated_at) ELSE updated_at END)) age
				 FROM urls WHERE state IN ('queued', 'claimed', 'fetched') GROUP BY state) x`).Scan(&line, &held)
			// Hosts sitting on URLs due for over 30 s: are they waiting for a signal, when did they claim?
			var asleep string
			_ = s.store.Pool().QueryRow(ctx, `SELECT coalesce(string_agg(format('%s(waiting=%s, claimed %ss ago)', u.host, h.waiting,
					round(extract(epoch FROM now() - h.last_claim_at))), ' '), '') FROM
				(SELECT DISTINCT host FROM urls WHERE state = 'queued' AND greatest(next_fetch_at, updated_at) < now() - interval '30 seconds') u
				LEFT JOIN hosts h USING (host)`).Scan(&asleep)
			if asleep != "" {
				line += "; asleep: " + asleep
			}
			samples = append(samples, fmt.Sprintf("%5.1fs %s", time.Since(start).Seconds(), line))
			oldestHeld = max(oldestHeld, time.Duration(held*float64(time.Second)))
			select {
			case <-ctx.Done():
			case <-time.After(2 * time.Second):
			}
		}
	}()
	var mu sync.Mutex
	var errs []string
	for _, run := range []interface {
		GetID() string
		Get(context.Context, any) error
	}{first, second} {
		wg.Go(func() {
			var p crawl.CrawlProgress
			err := run.Get(ctx, &p)
			mu.Lock()
			defer mu.Unlock()
			ended[run.GetID()] = time.Now()
			if err != nil {
				errs = append(errs, fmt.Sprintf("%s did not finish: %v", run.GetID(), err))
			} else if p.State != "done" || p.Pending != 0 {
				errs = append(errs, fmt.Sprintf("%s ended %s with %d pending", run.GetID(), p.State, p.Pending))
			}
		})
	}
	wg.Wait()
	close(crawlsDone)
	cancel()
	<-sampleDone
	<-killsDone
	t.Logf("pending URLs every 2 s:\n  %s", strings.Join(samples, "\n  "))
	t.Logf("deaths:\n  %s", strings.Join(deaths, "\n  "))
	for id, at := range ended {
		t.Logf("%s ended %.1fs after the start", id, at.Sub(start).Seconds())
	}
	if len(errs) > 0 {
		s.dumpPending()
		t.Fatal(strings.Join(errs, "; "))
	}
	// Each role dies at least once (the schedule starts with one of each; how many of the rest
	// fit depends on how long the crawls take on this machine).
	for _, role := range []string{"fetch", "process", "workflow"} {
		killed := false
		for _, d := range deaths {
			killed = killed || (strings.Contains(d, " "+role+" at ") && !strings.Contains(d, "not reached"))
		}
		if !killed {
			t.Errorf("the %s worker was never killed: its failpoints were not reached", role)
		}
	}
	// Batches here carry 3 s of requests, and processing takes seconds: a URL claimed or fetched
	// for longer than the bound waited for a lease, a sweep or a lost wake-up instead of the
	// heartbeat timeout of the attempt that died with it.
	if oldestHeld > recoveryBound {
		t.Errorf("a URL stayed claimed or fetched for %v (bound %v)", oldestHeld.Round(time.Second), recoveryBound)
	}
	checkNoPoliteness(t, s)
}

// checkNoPoliteness fails on any politeness violation in the test web's audit.
func checkNoPoliteness(t *testing.T, s *stack) {
	t.Helper()
	tot := s.web.Audit().Report().Totals
	if v := tot.GapViolations + tot.ConcurrencyViolations + tot.Disallowed + tot.RetryAfterViolations + tot.RobotsNotFirst; v != 0 {
		t.Errorf("%d politeness violations: %+v", v, tot)
	}
}
