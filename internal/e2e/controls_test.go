package e2e

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/testweb"
)

// Every crawl control, through the trawler CLI where it has one, checked against the test
// web's audit: pausing one crawl leaves another running; block stops a host at once; added
// seeds are crawled (their hosts enter a host-scoped crawl); dead letters are listed and
// replayed (refetched, then dead again); stop ends the crawl.
func TestCrawlControls(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.Pages = 6, 150
	wc.DefaultDelay = 200 * time.Millisecond
	s := newStack(t, wc)
	bin := buildBinary(t, "trawler", "./starter")
	run := func(args ...string) (string, error) {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(s.env(), "DATABASE_URL="+s.cfg.DatabaseURL)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	cli := func(args ...string) string {
		t.Helper()
		out, err := run(args...)
		if err != nil {
			t.Fatalf("trawler %v: %v\n%s", args, err, out)
		}
		return out
	}
	base := crawl.Spec{Scope: crawl.ScopeHost, Delay: crawl.Duration(300 * time.Millisecond), BatchWindow: crawl.Duration(2 * time.Second),
		RequestTimeout: crawl.Duration(3 * time.Second), MaxAttempts: 2, RetryBase: crawl.Duration(200 * time.Millisecond),
		HostIdleTimeout: crawl.Duration(time.Minute), ProgressInterval: crawl.Duration(time.Second),
		Recrawl: crawl.Recrawl{Interval: crawl.Duration(time.Hour)}} // never done by itself: stopped at the end
	a, b := base, base
	a.Name, a.Seeds = "ctl-a", []string{"http://h0000.test/", "http://h0001.test/", "http://error.test/"}
	b.Name, b.Seeds = "ctl-b", []string{"http://h0002.test/", "http://h0003.test/"}
	runA, runB := s.start(a), s.start(b)
	audit := s.web.Audit()
	requestsTo := func(host string, from, to time.Time) int {
		n := 0
		for _, r := range audit.Requests(host) {
			if !r.Start.Before(from) && r.Start.Before(to) {
				n++
			}
		}
		return n
	}

	// Dead letters: error.test's five pages fail twice each, then are listed by host and reason.
	// (The crawl's row is written by its workflow's first activity: until then the CLI knows no
	// crawl "ctl-a".)
	waitFor(t, 30*time.Second, func() bool {
		out, err := run("dlq", "list", "--crawl", "ctl-a")
		if err != nil && !strings.Contains(out, `no crawl "ctl-a"`) {
			t.Fatalf("trawler dlq list: %v\n%s", err, out)
		}
		return err == nil && strings.Count(out, "/fail/") == 5
	})
	list := cli("dlq", "list", "--crawl", "ctl-a", "--host", "error.test", "--reason", "http 500")
	if strings.Count(list, "/fail/") != 5 {
		t.Fatalf("dlq list by host and reason:\n%s", list)
	}
	if out := cli("dlq", "list", "--crawl", "ctl-a", "--reason", "no such reason"); strings.Contains(out, "error.test") {
		t.Errorf("reason filter matched: %s", out)
	}
	before := len(failRequests(audit))
	cli("dlq", "replay", "--crawl", "ctl-a", "--host", "error.test")
	waitFor(t, 30*time.Second, func() bool { return len(failRequests(audit)) >= before+10 }) // 5 pages × 2 attempts again
	waitFor(t, 30*time.Second, func() bool { return strings.Count(cli("dlq", "list", "--crawl", "ctl-a"), "/fail/") == 5 })

	// Pause crawl A: its hosts go quiet while crawl B's keep being fetched; resume brings A back.
	if err := s.tc.SignalWorkflow(context.Background(), runA.GetID(), "", crawl.SignalPause, nil); err != nil {
		t.Fatal(err)
	}
	paused := time.Now()
	time.Sleep(4 * time.Second)
	quietFrom := paused.Add(time.Second) // a batch in flight releases the paused crawl's URLs at its next slot (300 ms)
	aDuring := requestsTo("h0000.test", quietFrom, time.Now()) + requestsTo("h0001.test", quietFrom, time.Now())
	bDuring := requestsTo("h0002.test", quietFrom, time.Now()) + requestsTo("h0003.test", quietFrom, time.Now())
	if aDuring != 0 || bDuring == 0 {
		t.Errorf("while crawl A was paused: %d requests to its hosts (want 0), %d to crawl B's (want some)", aDuring, bDuring)
	}
	if err := s.tc.SignalWorkflow(context.Background(), runA.GetID(), "", crawl.SignalResume, nil); err != nil {
		t.Fatal(err)
	}
	resumed := time.Now()
	waitFor(t, 20*time.Second, func() bool { return requestsTo("h0000.test", resumed, time.Now()) > 0 })

	// Block h0001.test live: no request starts there a moment later; its queued URLs are skipped.
	cli("block", "--crawl", "ctl-a", "--host", "H0001.test")
	blocked := time.Now()
	time.Sleep(3 * time.Second)
	if n := requestsTo("h0001.test", blocked.Add(time.Second), time.Now()); n != 0 {
		t.Errorf("%d requests to a blocked host", n)
	}

	// Add a seed on a new host: a host-scoped crawl takes the host in and crawls it.
	cli("seed", "--crawl", "ctl-a", "http://h0004.test/")
	waitFor(t, 30*time.Second, func() bool { return len(audit.Requests("h0004.test")) >= 3 })

	p, err := queryCrawl(s, runA.GetID())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, c := range p.Controls {
		if c.Error != "" {
			t.Errorf("control %s failed: %s", c.Signal, c.Error)
		}
		got[c.Signal] += c.Count
	}
	if got[crawl.SignalReplay] != 5 || got[crawl.SignalBlock] == 0 || got[crawl.SignalAddSeeds] != 1 || p.Skipped["blocked"] == 0 {
		t.Errorf("control results %v, skipped %v", got, p.Skipped)
	}

	// Stop both; they end, and crawl B never saw a control.
	for _, run := range []string{runA.GetID(), runB.GetID()} {
		if err := s.tc.SignalWorkflow(context.Background(), run, "", crawl.SignalStop, nil); err != nil {
			t.Fatal(err)
		}
	}
	if pa, pb := s.wait(runA, time.Minute), s.wait(runB, time.Minute); pa.State != "stopped" || pb.State != "stopped" || len(pb.Controls) != 0 {
		t.Errorf("after stop: A %s, B %s with controls %v", pa.State, pb.State, pb.Controls)
	}
	if v := audit.Report().Violations(); v != 0 {
		t.Errorf("%d politeness violations", v)
	}
}

func failRequests(a *testweb.Audit) []testweb.Request {
	var out []testweb.Request
	for _, r := range a.Requests("error.test") {
		if strings.HasPrefix(r.Path, "/fail/") {
			out = append(out, r)
		}
	}
	return out
}

func queryCrawl(s *stack, id string) (crawl.CrawlProgress, error) {
	var p crawl.CrawlProgress
	v, err := s.tc.QueryWorkflow(context.Background(), id, "", crawl.QueryProgress)
	if err != nil {
		return p, err
	}
	return p, v.Get(&p)
}
