package e2e

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/testweb"
	"github.com/trawlerdev/trawler/internal/urlnorm"
)

// fault is one injected failure: at After into the crawl, Do it.
type fault struct {
	After time.Duration
	Name  string
	Do    func(t *testing.T, c *chaosRun)
}

// chaosRun is a crawl by separate worker processes that faults are injected into.
type chaosRun struct {
	s       *stack
	bin     string
	workers map[string]*workerProcess // by role
	log     []string
	at      []time.Duration // when each logged fault was injected
}

func (c *chaosRun) kill(t *testing.T, role string) {
	w := c.workers[role]
	_ = w.cmd.Process.Signal(syscall.SIGKILL)
	_ = w.cmd.Wait()
	time.Sleep(2 * time.Second) // dead for a while: its activities time out and move
	c.workers[role] = c.s.startWorkerProcess(t, c.bin, roleOf(role))
}

func roleOf(name string) string { return strings.TrimRight(name, "0123456789") }

// stackService runs scripts/stack.sh start|stop|restart SERVICE.
func stackService(t *testing.T, verb, svc string) {
	t.Helper()
	script(t, "scripts/stack.sh", verb, svc)
}

// script runs one of the repo's scripts and returns what it said.
func script(t *testing.T, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = repoRoot(t)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// killEvery kills a random worker every 20–30 s from start to end.
func killEvery(start, end time.Duration, seed uint64) []fault {
	r := rand.New(rand.NewPCG(seed, 1))
	roles := []string{"workflow", "fetch1", "fetch2", "process"}
	var out []fault
	for at := start; at < end; at += time.Duration(20+r.IntN(11)) * time.Second {
		role := roles[r.IntN(len(roles))]
		out = append(out, fault{After: at, Name: "SIGKILL " + role + " worker", Do: func(t *testing.T, c *chaosRun) { c.kill(t, role) }})
	}
	return out
}

// runChaos crawls the test web with 1 workflow, 2 fetch and 1 process worker processes while
// the faults happen, then checks that nothing was lost or doubled and politeness held.
func runChaos(t *testing.T, wc testweb.Config, faults []fault, timeout time.Duration) *chaosRun {
	s := newStackWithoutWorkers(t, wc)
	c := &chaosRun{s: s, bin: buildBinary(t, "trawler-worker", "./workers"), workers: map[string]*workerProcess{}}
	for _, role := range []string{"workflow", "fetch1", "fetch2", "process"} {
		c.workers[role] = s.startWorkerProcess(t, c.bin, roleOf(role))
	}
	spec := crawl.Spec{Name: "chaos", Seeds: s.web.Seeds(), Scope: crawl.ScopeAny, MaxPagesPerHost: wc.Pages + 10,
		Delay: crawl.Duration(wc.DefaultDelay), BatchWindow: crawl.Duration(3 * time.Second),
		RequestTimeout: crawl.Duration(3 * time.Second), MaxBodyBytes: 2 << 20, MaxAttempts: 3,
		RetryBase: crawl.Duration(500 * time.Millisecond), HostIdleTimeout: crawl.Duration(30 * time.Second),
		ProgressInterval: crawl.Duration(time.Second)}
	start := time.Now()
	run := s.start(spec)
	progress := sampleProgress(s, start)
	slices.SortFunc(faults, func(a, b fault) int { return int(a.After - b.After) })
	done := make(chan struct{})
	var p crawl.CrawlProgress
	var waitErr error
	go func() {
		defer close(done)
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		for { // a restarting Temporal server breaks the long poll: poll again
			if waitErr = s.tc.GetWorkflow(ctx, run.GetID(), "").Get(ctx, &p); waitErr == nil || ctx.Err() != nil {
				return
			}
			var appErr *temporal.ApplicationError
			if errors.As(waitErr, &appErr) {
				return
			}
			time.Sleep(time.Second)
		}
	}()
	for _, f := range faults {
		select {
		case <-done:
		case <-time.After(time.Until(start.Add(f.After))):
			c.at = append(c.at, time.Since(start))
			c.log = append(c.log, fmt.Sprintf("%5.0fs %s", time.Since(start).Seconds(), f.Name))
			f.Do(t, c)
			continue
		}
		break
	}
	<-done
	elapsed := time.Since(start)
	for role, w := range c.workers { // a worker must outlive the outages it was started in
		if w.exited() {
			out := w.out.String()
			t.Errorf("the %s worker exited by itself; its output ends:\n%s", role, out[max(0, len(out)-4000):])
		}
	}
	t.Logf("faults injected:\n  %s", strings.Join(c.log, "\n  "))
	t.Logf("recovery (the crawl's fetch rate over 3 s back to half its rate in the 10 s before):\n  %s",
		strings.Join(progress.recoveries(c), "\n  "))
	if waitErr != nil {
		s.dumpPending()
		t.Fatalf("crawl did not finish: %v", waitErr)
	}
	checkNothingLost(t, s, p, elapsed, len(c.log))
	return c
}

// checkNothingLost holds a finished crawl to the truth: every reachable allowed page stored
// once, no document twice, dead letters only for pages that deserve them, and no politeness
// violation.
func checkNothingLost(t *testing.T, s *stack, p crawl.CrawlProgress, elapsed time.Duration, faults int) {
	t.Helper()
	ctx := context.Background()
	truth := s.web.Truth(s.web.Seeds())
	rep := s.web.Audit().Report()
	stored := map[string]int{}
	rows, err := s.store.Pool().Query(ctx, `SELECT u.url FROM documents d JOIN urls u USING (crawl_id, url_hash) WHERE d.crawl_id = $1`, p.CrawlID)
	if err != nil {
		t.Fatal(err)
	}
	norm := urlnorm.New(urlnorm.Default()) // stored as first requested; the truth spells URLs canonically
	for rows.Next() {
		var u string
		_ = rows.Scan(&u)
		if k, err := norm.Normalize(u); err == nil {
			u = k
		}
		stored[u]++
	}
	rows.Close()
	lost := 0
	for _, u := range truth.Pages {
		if stored[u] == 0 {
			lost++
			if lost <= 10 {
				t.Errorf("lost: %s", u)
			}
		}
	}
	var docs, distinct int
	_ = s.store.Pool().QueryRow(ctx, `SELECT count(*), count(DISTINCT url_hash) FROM documents WHERE crawl_id = $1`, p.CrawlID).Scan(&docs, &distinct)
	// (Hosts' counters are their fetches summed when read, since schema 0038: no counter of
	// them can drift from the fetch log any more.)
	dead, err := s.store.Fetches().DeadLetters(ctx, p.CrawlID, 10000)
	if err != nil {
		t.Fatal(err)
	}
	wrongDead := 0
	for _, d := range dead {
		if !slices.Contains(truth.Dead, d.URL) && !strings.HasPrefix(d.URL, "http://hostile.test/") {
			wrongDead++
			t.Errorf("undeserved dead letter: %s (%s)", d.URL, d.Reason)
		}
	}
	tot := rep.Totals
	violations := tot.GapViolations + tot.ConcurrencyViolations + tot.Disallowed + tot.RetryAfterViolations + tot.RobotsNotFirst
	t.Logf("chaos report: %d faults; %d truth pages, %d stored, lost %d; duplicates stored %d; "+
		"%d dead letters (%d undeserved); %d requests, %d repeated 2xx requests (at-least-once after kills), %d politeness violations; %v",
		faults, len(truth.Pages), distinct, lost, docs-distinct, len(dead), wrongDead, tot.Requests, tot.Repeats,
		violations, elapsed.Round(time.Second))
	for _, h := range rep.Hosts { // show each gap or overlap: which requests, how close
		if h.GapViolations+h.ConcurrencyViolations == 0 {
			continue
		}
		reqs := s.web.Audit().Requests(h.Host)
		for i := 1; i < len(reqs); i++ {
			if gap := reqs[i].Start.Sub(reqs[i-1].Start); gap < time.Duration(h.RequiredDelayMs)*time.Millisecond {
				t.Logf("gap violation on %s: %s then %s, %v apart (required %d ms)", h.Host, reqs[i-1].Path, reqs[i].Path, gap, h.RequiredDelayMs)
			}
			if reqs[i].Start.Before(reqs[i-1].End) {
				t.Logf("overlap on %s: %s (%s, %v, status %d) still answering when %s started", h.Host, reqs[i-1].Path,
					reqs[i-1].Start.Format("15:04:05.000"), reqs[i-1].End.Sub(reqs[i-1].Start), reqs[i-1].Status, reqs[i].Path)
			}
		}
	}
	if lost != 0 || docs != distinct || violations != 0 || p.State != "done" {
		t.Errorf("chaos invariants broken (progress %+v; audit %+v)", p, tot)
	}
}

// The short chaos variant in `make test`: each worker role is SIGKILLed once mid-crawl.
func TestChaosWorkerKills(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.Pages = 20, 12
	wc.DefaultDelay, wc.RetryAfter, wc.SlowRobots = 200*time.Millisecond, 2*time.Second, time.Second
	runChaos(t, wc, []fault{
		{After: 6 * time.Second, Name: "SIGKILL fetch1 worker", Do: func(t *testing.T, c *chaosRun) { c.kill(t, "fetch1") }},
		{After: 12 * time.Second, Name: "SIGKILL process worker", Do: func(t *testing.T, c *chaosRun) { c.kill(t, "process") }},
		{After: 18 * time.Second, Name: "SIGKILL workflow worker", Do: func(t *testing.T, c *chaosRun) { c.kill(t, "workflow") }},
	}, 5*time.Minute)
}
