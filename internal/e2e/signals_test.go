package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/testweb"
)

// throttle, pause and resume change the host's request timing as the audit sees it, within
// 1.5 s of the signal, with heartbeats as shipped (TRAWLER_HEARTBEAT_MAX 10 s, a lease beating
// every 20 s): the cancel reaches the running lease because the workflow tells it through
// Postgres, not at its next beat.
func TestPauseThrottleResumeChangeTiming(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.Pages, wc.Specials = 1, 40, false
	wc.DefaultDelay = 200 * time.Millisecond
	s := newStackWithoutWorkers(t, wc)
	s.cfg.HeartbeatMax = 10 * time.Second // the shipped default
	// Activity leases: a run's first lease, when local, takes a signal when it ends (up to
	// TRAWLER_LOCAL_LEASE and its last chunk later; TestAPauseReachesALocalLeaseAtItsEnd).
	s.cfg.LocalLease = 0
	s.startWorkers(s.cfg)
	run := s.start(crawl.Spec{Seeds: s.web.Seeds(), Scope: crawl.ScopeAny, Delay: crawl.Duration(200 * time.Millisecond),
		BatchWindow: crawl.Duration(2 * time.Second), ProgressInterval: crawl.Duration(time.Second),
		HostIdleTimeout: crawl.Duration(5 * time.Second)})
	const host = "h0000.test"
	hostID := crawl.HostWorkflowID(s.cfg.IDPrefix, host)
	ctx := context.Background()
	requests := func() []testweb.Request { return s.web.Audit().Requests(host) }
	deadline := time.Now().Add(30 * time.Second)
	for len(requests()) < 6 {
		if time.Now().After(deadline) {
			t.Fatalf("crawl did not start: %d requests", len(requests()))
		}
		time.Sleep(100 * time.Millisecond)
	}
	signal := func(name string, arg any) time.Time {
		if err := s.tc.SignalWorkflow(ctx, hostID, "", name, arg); err != nil {
			t.Fatalf("signal %s: %v", name, err)
		}
		return time.Now()
	}
	tThrottle := signal(crawl.SignalThrottle, crawl.Throttle{Delay: crawl.Duration(time.Second)})
	time.Sleep(5 * time.Second)
	tPause := signal(crawl.SignalPause, nil)
	time.Sleep(4 * time.Second)
	v, err := s.tc.QueryWorkflow(ctx, hostID, "", crawl.QueryStatus)
	if err != nil {
		t.Fatal(err)
	}
	var st crawl.HostStatus
	_ = v.Get(&st)
	if !st.Paused || st.State != "paused" || st.Delay != "1s" {
		t.Errorf("status while paused: %+v", st)
	}
	tResume := signal(crawl.SignalResume, nil)
	time.Sleep(3 * time.Second)
	signal(crawl.SignalThrottle, crawl.Throttle{Reset: true})
	p := s.wait(run, 2*time.Minute)

	const settle = 1500 * time.Millisecond // the request in flight when a signal lands may finish
	var throttled, paused, resumed []time.Time
	for _, r := range requests() {
		switch {
		case r.Start.After(tThrottle.Add(settle)) && r.Start.Before(tPause):
			throttled = append(throttled, r.Start)
		case r.Start.After(tPause.Add(settle)) && r.Start.Before(tResume):
			paused = append(paused, r.Start)
		case r.Start.After(tResume):
			resumed = append(resumed, r.Start)
		}
	}
	if len(throttled) < 2 {
		t.Errorf("only %d requests while throttled", len(throttled))
	}
	for i := 1; i < len(throttled); i++ {
		if gap := throttled[i].Sub(throttled[i-1]); gap < 980*time.Millisecond {
			t.Errorf("gap %v while throttled to 1s", gap)
		}
	}
	if len(paused) != 0 {
		t.Errorf("%d requests while paused", len(paused))
	}
	if len(resumed) == 0 {
		t.Error("no requests after resume")
	}
	rep := s.web.Audit().Report()
	if rep.Violations() != 0 || rep.Totals.Repeats != 0 {
		t.Errorf("audit: %+v", rep.Totals)
	}
	if p.State != "done" || p.Fetched < 30 {
		t.Errorf("crawl: %+v", p)
	}
	t.Logf("throttled %d, paused %d, resumed %d requests; crawl %+v", len(throttled), len(paused), len(resumed), p)
}

// With concurrency N a host sees up to N requests in flight, their starts still the delay
// apart; a throttle to concurrency 1 brings it back to one.
func TestPerHostConcurrency(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.Pages, wc.Specials = 1, 30, false
	wc.DefaultDelay, wc.PageLatency, wc.MaxInFlight = 100*time.Millisecond, 500*time.Millisecond, 3
	s := newStack(t, wc)
	start := time.Now()
	p := s.crawl(crawl.Spec{Seeds: s.web.Seeds(), Scope: crawl.ScopeAny, Delay: crawl.Duration(100 * time.Millisecond),
		Concurrency: 3, BatchWindow: crawl.Duration(3 * time.Second), ProgressInterval: crawl.Duration(time.Second),
		HostIdleTimeout: crawl.Duration(5 * time.Second)}, 2*time.Minute)
	elapsed := time.Since(start)
	h := s.web.Audit().Report().Host("h0000.test")
	if p.State != "done" || h.Requests < 25 {
		t.Fatalf("crawl %+v, %d requests", p, h.Requests)
	}
	if h.PeakInFlight < 2 || h.ConcurrencyViolations != 0 || h.GapViolations != 0 || h.MinGapMs < 95 {
		t.Errorf("host audit: %+v", h)
	}
	t.Logf("%d pages in %v with 3 in flight (500 ms pages, 100 ms delay); peak in flight %d, min gap %.0f ms",
		p.Fetched, elapsed.Round(time.Millisecond), h.PeakInFlight, h.MinGapMs)
}

// Hosts that share an IP address share its per-IP limit too, whichever worker fetches them.
func TestPerIPLimitAcrossHosts(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.Pages, wc.Specials = 6, 5, false
	wc.DefaultDelay = 100 * time.Millisecond
	s := newStackWithoutWorkers(t, wc)
	s.cfg.IPGap, s.cfg.IPGapOverride = 250*time.Millisecond, true // every test host is 127.0.0.1
	s.startWorkers(s.cfg)
	p := s.crawl(crawl.Spec{Seeds: s.web.Seeds(), Scope: crawl.ScopeAny, Delay: crawl.Duration(100 * time.Millisecond),
		RetryBase: crawl.Duration(500 * time.Millisecond), ProgressInterval: crawl.Duration(time.Second),
		HostIdleTimeout: crawl.Duration(5 * time.Second)}, 3*time.Minute)
	reqs := s.web.Audit().Requests("")
	if p.State != "done" || len(reqs) < 20 {
		t.Fatalf("crawl %+v, %d requests", p, len(reqs))
	}
	minGap := time.Hour
	for i := 1; i < len(reqs); i++ {
		minGap = min(minGap, reqs[i].Start.Sub(reqs[i-1].Start))
	}
	if minGap < 240*time.Millisecond {
		t.Errorf("requests to one IP only %v apart; the per-IP gap is 250ms", minGap)
	}
	if v := s.web.Audit().Report().Violations(); v != 0 {
		t.Errorf("%d host politeness violations", v)
	}
	t.Logf("%d requests over %d hosts of one IP, min gap %v", len(reqs), wc.Hosts, minGap)
}

// A throttle sent to a crawl (trawler throttle --crawl, or the same JSON to crawl/NAME with
// the temporal CLI) slows every one of its hosts within seconds, and its reset speeds them up
// again; the audit sees no violation either way.
func TestThrottleAWholeCrawl(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.Pages, wc.Specials, wc.SeedEvery = 6, 60, false, 1
	wc.DefaultDelay = 200 * time.Millisecond
	s := newStack(t, wc)
	var hosts []string // two hosts whose robots.txt sets no Crawl-delay of its own
	for _, h := range s.web.Hosts() {
		if s.web.RequiredDelay(h) == wc.DefaultDelay && len(hosts) < 2 {
			hosts = append(hosts, h)
		}
	}
	spec := crawl.Spec{Seeds: s.web.Seeds(), Scope: crawl.ScopeAny, Delay: crawl.Duration(200 * time.Millisecond),
		BatchWindow: crawl.Duration(2 * time.Second), ProgressInterval: crawl.Duration(time.Second), HostIdleTimeout: crawl.Duration(5 * time.Second)}
	run := s.start(spec)
	deadline := time.Now().Add(30 * time.Second)
	for len(s.web.Audit().Requests(hosts[0])) < 4 || len(s.web.Audit().Requests(hosts[1])) < 4 {
		if time.Now().After(deadline) {
			t.Fatalf("crawl did not start on both hosts: seeds %v, %d and %d requests", s.web.Seeds(),
				len(s.web.Audit().Requests(hosts[0])), len(s.web.Audit().Requests(hosts[1])))
		}
		time.Sleep(100 * time.Millisecond)
	}
	ctx := context.Background()
	signal := func(arg crawl.Throttle) time.Time {
		if err := s.tc.SignalWorkflow(ctx, run.GetID(), "", crawl.SignalThrottle, arg); err != nil {
			t.Fatal(err)
		}
		return time.Now()
	}
	tThrottle := signal(crawl.Throttle{Delay: crawl.Duration(time.Second)})
	time.Sleep(14 * time.Second)
	tReset := signal(crawl.Throttle{Reset: true})
	time.Sleep(14 * time.Second)
	tEnd := time.Now()
	// A lease reads its crawls' pacing every 2 s through a cache of 5 s (the worker that ran
	// the throttle forgets its copy at once), and the request in flight may finish.
	const settle = 8 * time.Second
	for _, h := range hosts {
		var throttled, after []time.Time
		for _, r := range s.web.Audit().Requests(h) {
			switch {
			case r.Start.After(tThrottle.Add(settle)) && r.Start.Before(tReset):
				throttled = append(throttled, r.Start)
			case r.Start.After(tReset.Add(settle)) && r.Start.Before(tEnd):
				after = append(after, r.Start)
			}
		}
		if len(throttled) < 3 {
			t.Errorf("%s: %d requests while the crawl was throttled", h, len(throttled))
		}
		for i := 1; i < len(throttled); i++ {
			if gap := throttled[i].Sub(throttled[i-1]); gap < 980*time.Millisecond {
				t.Errorf("%s: gap %v while the crawl was throttled to 1s", h, gap)
			}
		}
		fast := 0
		for i := 1; i < len(after); i++ {
			if after[i].Sub(after[i-1]) < 600*time.Millisecond {
				fast++
			}
		}
		if fast == 0 {
			t.Errorf("%s: after the reset %d requests, none closer than 600 ms apart", h, len(after))
		}
		t.Logf("%s: %d requests throttled, %d after the reset (%d fast gaps)", h, len(throttled), len(after), fast)
	}
	if rep := s.web.Audit().Report(); rep.Violations() != 0 {
		t.Errorf("audit: %+v", rep.Totals)
	}
	_ = s.tc.TerminateWorkflow(ctx, run.GetID(), "", "test over")
}
