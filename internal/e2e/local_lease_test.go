package e2e

import (
	"context"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/testweb"
)

// newStackWithLocalLeases is a stack whose host runs' first leases are local (10 s).
func newStackWithLocalLeases(t *testing.T, wc testweb.Config) *stack {
	s := newStackWithoutWorkers(t, wc)
	s.cfg.LocalLease = 10 * time.Second
	s.startWorkers(s.cfg)
	return s
}

// hostLeases counts a host run's fetch leases in its history: activity leases (FetchBatch
// scheduled) and local ones (the SDK's LocalActivity markers of FetchLocalLease).
type hostLeases struct {
	activity, local, timers, events int
}

func leasesOf(t *testing.T, s *stack, host string) hostLeases {
	t.Helper()
	var n hostLeases
	it := s.tc.GetWorkflowHistory(context.Background(), crawl.HostWorkflowID(s.cfg.IDPrefix, host), "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		n.events++
		switch ev.EventType {
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			if ev.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName() == "FetchBatch" {
				n.activity++
			}
		case enumspb.EVENT_TYPE_MARKER_RECORDED:
			if localActivityType(ev) == "FetchLocalLease" {
				n.local++
			}
		case enumspb.EVENT_TYPE_TIMER_STARTED:
			n.timers++
		}
	}
	return n
}

// localActivityType is the activity type a LocalActivity marker records ("" for any other
// event or marker).
func localActivityType(ev *historypb.HistoryEvent) string {
	m := ev.GetMarkerRecordedEventAttributes()
	if m.GetMarkerName() != "LocalActivity" {
		return ""
	}
	var data struct{ ActivityType string }
	if p := m.GetDetails()["data"]; p != nil && converter.GetDefaultDataConverter().FromPayloads(p, &data) == nil {
		return data.ActivityType
	}
	return ""
}

// A small host's run is one workflow task: its first lease runs as a local activity in the
// workflow worker, fetches the host's few pages (links its own pages yield included), and the
// run ends without a lease on the fetch queue — 6 history events where an activity lease
// costs 11 — keeping every gap.
func TestSmallHostsRunInOneWorkflowTask(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.Pages, wc.Specials = 4, 3, false
	wc.DefaultDelay = 300 * time.Millisecond
	s := newStackWithLocalLeases(t, wc)
	p := s.crawl(crawl.Spec{Seeds: s.web.Seeds(), Scope: crawl.ScopeAny, Delay: crawl.Duration(wc.DefaultDelay),
		ProgressInterval: crawl.Duration(time.Second)}, 3*time.Minute)
	if p.State != crawl.CrawlDone || p.Pages != int64(wc.Hosts*wc.Pages) {
		t.Fatalf("crawl: %+v; want all %d pages", p, wc.Hosts*wc.Pages)
	}
	checkNoPoliteness(t, s)
	oneTask := 0
	for _, host := range s.web.Hosts() {
		n := leasesOf(t, s, host)
		t.Logf("%s's last run: %+v", host, n)
		if n.local != 1 {
			t.Errorf("%s's last run had %d local leases, want its first lease local", host, n.local)
		}
		if n.events <= 7 && n.activity == 0 {
			oneTask++
		}
	}
	if oneTask == 0 {
		t.Errorf("no host's last run was one workflow task and its local lease (at most 7 events)")
	}
}

// A pause that lands while a run's first lease runs locally takes effect when that lease ends:
// no request leaves later than the local lease's claiming window, its last chunk and a request
// in flight after the signal; a resume goes on and the crawl finishes without a violation.
func TestAPauseReachesALocalLeaseAtItsEnd(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.Pages, wc.Specials = 1, 40, false
	wc.DefaultDelay = 200 * time.Millisecond
	s := newStackWithLocalLeases(t, wc)
	run := s.start(crawl.Spec{Seeds: s.web.Seeds(), Scope: crawl.ScopeAny, Delay: crawl.Duration(wc.DefaultDelay),
		BatchWindow: crawl.Duration(2 * time.Second), ProgressInterval: crawl.Duration(time.Second),
		HostIdleTimeout: crawl.Duration(5 * time.Second)})
	const host = "h0000.test"
	hostID := crawl.HostWorkflowID(s.cfg.IDPrefix, host)
	requests := func() []testweb.Request { return s.web.Audit().Requests(host) }
	waitFor(t, 30*time.Second, func() bool { return len(requests()) >= 3 })
	ctx := context.Background()
	if err := s.tc.SignalWorkflow(ctx, hostID, "", crawl.SignalPause, nil); err != nil {
		t.Fatal(err)
	}
	tPause := time.Now()
	// The local lease claims for s.cfg.LocalLease, then fetches its last chunk (10 URLs at
	// 200 ms); a request in flight may finish.
	bound := s.cfg.LocalLease + 2*time.Second + 1500*time.Millisecond
	time.Sleep(bound + 3*time.Second)
	var late []time.Time
	for _, r := range requests() {
		if r.Start.After(tPause.Add(bound)) {
			late = append(late, r.Start)
		}
	}
	if len(late) != 0 {
		t.Errorf("%d requests more than %v after the pause: %v", len(late), bound, late)
	}
	n := leasesOf(t, s, host)
	if n.local != 1 {
		t.Errorf("host history %+v: want the first lease local", n)
	}
	if err := s.tc.SignalWorkflow(ctx, hostID, "", crawl.SignalResume, nil); err != nil {
		t.Fatal(err)
	}
	p := s.wait(run, 2*time.Minute)
	if p.State != crawl.CrawlDone || p.Pages < 30 {
		t.Errorf("crawl: %+v; want the host's pages", p)
	}
	checkNoPoliteness(t, s)
}
