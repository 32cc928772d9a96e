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

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/failpoint"
	"github.com/trawlerdev/trawler/internal/testenv"
	"github.com/trawlerdev/trawler/internal/testweb"
)

// recoveryBound is the README's promise (Resilience): after a worker dies, what it held is
// fetched or processed again, and its hosts are awake, within this time.
const recoveryBound = 45 * time.Second

// supervised is a worker process that is restarted when it dies, each time armed with the next
// failpoint of its list (then unarmed): a role killed at each of its worst moments in turn.
type supervised struct {
	s      *stack
	bin    string
	roles  string
	points []string

	mu     sync.Mutex
	cur    *exec.Cmd
	out    strings.Builder
	deaths []string // "12.3s fetch-recorded#4"
	last   time.Time
	stop   bool
	done   chan struct{}
}

func superviseWorker(t *testing.T, s *stack, bin, roles string, start time.Time, points ...string) *supervised {
	w := &supervised{s: s, bin: bin, roles: roles, points: points, done: make(chan struct{})}
	go w.loop(t, start)
	t.Cleanup(func() {
		w.mu.Lock()
		w.stop = true
		if w.cur != nil && w.cur.Process != nil {
			_ = w.cur.Process.Signal(syscall.SIGTERM)
		}
		w.mu.Unlock()
		select {
		case <-w.done:
		case <-time.After(20 * time.Second):
			t.Errorf("worker %s did not stop", roles)
		}
		if t.Failed() {
			t.Logf("worker %s output (tail):\n%s", roles, tail(w.out.String(), 6000))
		}
	})
	return w
}

func (w *supervised) loop(t *testing.T, start time.Time) {
	defer close(w.done)
	for {
		w.mu.Lock()
		if w.stop {
			w.mu.Unlock()
			return
		}
		spec := ""
		if len(w.points) > 0 {
			spec, w.points = w.points[0], w.points[1:]
		}
		cmd := exec.Command(w.bin)
		cmd.Env = append(w.s.workerEnv(w.roles, freeAddr(t)), failpoint.EnvVar+"="+spec)
		cmd.Stdout, cmd.Stderr = &w.out, &w.out
		if err := cmd.Start(); err != nil {
			w.mu.Unlock()
			t.Errorf("start worker %s: %v", w.roles, err)
			return
		}
		w.cur = cmd
		w.mu.Unlock()
		err := cmd.Wait()
		w.mu.Lock()
		if w.stop {
			w.mu.Unlock()
			return
		}
		w.deaths = append(w.deaths, fmt.Sprintf("%5.1fs %s at %s (%v)", time.Since(start).Seconds(), w.roles, spec, err))
		w.last = time.Now()
		w.mu.Unlock()
		time.Sleep(time.Second) // dead for a moment: its tasks must move
	}
}

func (w *supervised) report() ([]string, time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.deaths...), w.last
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
	wc.Hosts, wc.Pages, wc.Specials = 16, 10, false
	wc.DefaultDelay = 200 * time.Millisecond
	s := newStackWithoutWorkers(t, wc)
	bin := buildBinary(t, "trawler-worker", "./workers")
	start := time.Now()
	workers := []*supervised{
		superviseWorker(t, s, bin, "workflow", start, failpoint.ClaimCommitted+"#4", failpoint.ClaimCommitted+"#10"),
		superviseWorker(t, s, bin, "fetch", start, failpoint.FetchRecorded+"#6", failpoint.TopUpClaimed+"#1",
			failpoint.BatchFetched+"#2", failpoint.FetchRecorded+"#9"),
		superviseWorker(t, s, bin, "fetch", start),
		superviseWorker(t, s, bin, "process", start, failpoint.LinksAdmitted+"#1", failpoint.DocumentSaved+"#5",
			failpoint.ProcessFinishing+"#2", failpoint.LinksAdmitted+"#3", failpoint.ProcessStarted+"#4"),
	}
	spec := func(name string) crawl.Spec {
		return crawl.Spec{Name: name, Seeds: s.web.Seeds(), Scope: crawl.ScopeAny, MaxPagesPerHost: wc.Pages + 10,
			Delay: crawl.Duration(wc.DefaultDelay), BatchWindow: crawl.Duration(3 * time.Second),
			RequestTimeout: crawl.Duration(3 * time.Second), MaxAttempts: 3, RetryBase: crawl.Duration(500 * time.Millisecond),
			HostIdleTimeout: crawl.Duration(30 * time.Second), ProgressInterval: crawl.Duration(time.Second)}
	}
	first := s.start(spec(testenv.Unique("first")))
	// The second crawl of the same hosts starts once the first kills have happened.
	deadline := time.Now().Add(40 * time.Second)
	for time.Now().Before(deadline) {
		if _, last := workers[3].report(); !last.IsZero() {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	second := s.start(spec(testenv.Unique("second")))
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	ended := map[string]time.Time{}
	var wg sync.WaitGroup
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
	var deaths []string
	var lastDeath time.Time
	for _, w := range workers {
		d, l := w.report()
		deaths = append(deaths, d...)
		if l.After(lastDeath) {
			lastDeath = l
		}
	}
	t.Logf("deaths:\n  %s", strings.Join(deaths, "\n  "))
	for id, at := range ended {
		t.Logf("%s ended %.1fs after the start, %.1fs after the last death", id, at.Sub(start).Seconds(), at.Sub(lastDeath).Seconds())
	}
	if len(errs) > 0 {
		s.dumpPending()
		t.Fatal(strings.Join(errs, "; "))
	}
	if len(deaths) < 6 {
		t.Errorf("only %d kills happened: the failpoints were not reached", len(deaths))
	}
	for id, at := range ended {
		// A crawl of this size takes ~20 s undisturbed: ending later than the bound after the last
		// death means something waited for a lease or a sweep instead of recovering.
		if at.Sub(lastDeath) > recoveryBound+20*time.Second {
			t.Errorf("%s ended %v after the last death (bound %v + the crawl's own time)", id, at.Sub(lastDeath).Round(time.Second), recoveryBound)
		}
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
