package e2e

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	commonpb "go.temporal.io/api/common/v1"
	sdkpb "go.temporal.io/api/sdk/v1"
	"go.temporal.io/sdk/converter"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/fetching"
	"github.com/trawlerdev/trawler/internal/store"
	"github.com/trawlerdev/trawler/internal/testenv"
	"github.com/trawlerdev/trawler/internal/testweb"
)

// What the Temporal UI shows of a crawl and of its hosts, where operators look: each workflow's
// summary and memo (set by the one starter of its kind, crawl.CrawlStart and crawl.HostStart),
// the CrawlID search attribute, and the current details each workflow keeps up to date (read
// through the metadata query, as the UI reads them).
func TestTheTemporalUIShowsSummariesMemoAndDetails(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.Pages, wc.Specials = 1, 3, false
	s := newStack(t, wc)
	name := testenv.Unique("ui")
	spec := crawl.Spec{Name: name, Seeds: s.web.Seeds(), Scope: crawl.ScopeAny, ProgressInterval: crawl.Duration(time.Second)}
	if p := s.crawl(spec, 2*time.Minute); p.State != crawl.CrawlDone || p.Pages != 3 {
		t.Fatalf("crawl: %+v", p)
	}
	crawlID, hostID := crawl.CrawlWorkflowID(s.cfg.IDPrefix, name), crawl.HostWorkflowID(s.cfg.IDPrefix, "h0000.test")

	summary, memo, attrs := describe(t, s, crawlID)
	if summary != crawl.CrawlSummary(spec) || !strings.Contains(summary, name) {
		t.Errorf("crawl summary %q, want %q", summary, crawl.CrawlSummary(spec))
	}
	if memo["crawl"] != name || attrs[crawl.SearchCrawlID.GetName()] != name {
		t.Errorf("crawl memo %v, search attributes %v: want the crawl's name in both", memo, attrs)
	}
	if d := details(t, s, crawlID); !strings.HasPrefix(d, "**done**") || !strings.Contains(d, "3 pages") {
		t.Errorf("crawl details %q: want its state and pages", d)
	}

	summary, memo, attrs = describe(t, s, hostID)
	if summary != crawl.HostSummary("h0000.test") {
		t.Errorf("host summary %q", summary)
	}
	if memo["host"] != "h0000.test" || memo["startedFor"] != name || attrs[crawl.SearchHost.GetName()] != "h0000.test" {
		t.Errorf("host memo %v, search attributes %v: want the host and the crawl that started it", memo, attrs)
	}
	if d := details(t, s, hostID); !strings.Contains(d, "fetched 3") || !strings.Contains(d, "delay ") {
		t.Errorf("host details %q: want its pacing and counts", d)
	}
}

// describe reads a workflow's summary, memo (string values) and keyword search attributes.
func describe(t *testing.T, s *stack, id string) (string, map[string]string, map[string]string) {
	t.Helper()
	resp, err := s.tc.DescribeWorkflowExecution(context.Background(), id, "")
	if err != nil {
		t.Fatal(err)
	}
	dc := converter.GetDefaultDataConverter()
	str := func(p *commonpb.Payload) string {
		var v string
		_ = dc.FromPayload(p, &v)
		return v
	}
	summary := str(resp.GetExecutionConfig().GetUserMetadata().GetSummary())
	memo, attrs := map[string]string{}, map[string]string{}
	for k, p := range resp.GetWorkflowExecutionInfo().GetMemo().GetFields() {
		memo[k] = str(p)
	}
	for k, p := range resp.GetWorkflowExecutionInfo().GetSearchAttributes().GetIndexedFields() {
		attrs[k] = str(p)
	}
	return summary, memo, attrs
}

// details reads a workflow's current details as the UI does: the metadata query.
func details(t *testing.T, s *stack, id string) string {
	t.Helper()
	v, err := s.tc.QueryWorkflow(context.Background(), id, "", "__temporal_workflow_metadata")
	if err != nil {
		t.Fatal(err)
	}
	var md sdkpb.WorkflowMetadata
	if err := v.Get(&md); err != nil {
		t.Fatal(err)
	}
	return md.GetCurrentDetails()
}

// What a host did, as the UI shows it: while its lease runs, the pending activity's heartbeat
// details give the pages fetched so far, the last URL and the next slot (the host's record in
// Postgres its latest fetches), and the host's current
// details say it waits for the lease; each lease activity's summary names the host, its claims
// and delay; its result lists every URL's status, size, time and verdict. All read through
// the Temporal API, as the UI reads them.
func TestTheTemporalUITellsWhatAHostDid(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.Pages, wc.Specials = 1, 6, false
	wc.DefaultDelay = 1200 * time.Millisecond
	// Activity leases only: a host of six pages would otherwise be fetched by its run's first,
	// local lease (TestSmallHostsRunInOneWorkflowTask), which the UI lists as a marker.
	s := newStackWithoutWorkers(t, wc)
	s.cfg.LocalLease = 0
	s.startWorkers(s.cfg)
	name := testenv.Unique("what")
	run := s.start(crawl.Spec{Name: name, Seeds: s.web.Seeds(), Scope: crawl.ScopeAny, Delay: crawl.Duration(1200 * time.Millisecond),
		ProgressInterval: crawl.Duration(time.Second)})
	hostID := crawl.HostWorkflowID(s.cfg.IDPrefix, "h0000.test")
	ctx := context.Background()
	dc := converter.GetDefaultDataConverter()

	// Live: a heartbeat with progress, and details saying what the host waits for.
	var live fetching.LeaseResult
	var liveDetails string
	var liveBytes int
	waitFor(t, 90*time.Second, func() bool {
		resp, err := s.tc.DescribeWorkflowExecution(ctx, hostID, "")
		if err != nil {
			return false
		}
		for _, pa := range resp.GetPendingActivities() {
			if pa.GetActivityType().GetName() != "FetchBatch" || pa.GetHeartbeatDetails() == nil {
				continue
			}
			var r fetching.LeaseResult
			if err := dc.FromPayloads(pa.GetHeartbeatDetails(), &r); err == nil && r.Fetched > 0 && r.LastURL != "" {
				live, liveDetails = r, details(t, s, hostID)
				liveBytes = pa.GetHeartbeatDetails().Size()
				return true
			}
		}
		return false
	})
	// The heartbeat is progress only (each one a write of the host workflow's state): the
	// per-URL outcomes are in Postgres as they are recorded, and in the lease's result.
	if live.NextSlot == nil || len(live.Outcomes) != 0 || liveBytes > fetching.MaxBeatBytes+64 {
		t.Errorf("the lease's heartbeat (%d bytes) %+v: want the next slot, no outcomes, under a kilobyte", liveBytes, live)
	}
	rec, err := s.store.Inspect().HostRecordOf(ctx, "h0000.test")
	if err != nil || len(rec.Recent) == 0 || !slices.ContainsFunc(rec.Recent, func(r store.RecentFetch) bool { return r.URL == live.LastURL && r.Status > 0 }) ||
		rec.Recent[len(rec.Recent)-1].FetchedAt.After(rec.Recent[0].FetchedAt) {
		t.Errorf("the host's record while its lease ran: %+v (%v); want its latest fetches, newest first", rec, err)
	}
	if !strings.Contains(liveDetails, "waiting for fetch lease") {
		t.Errorf("the host's details while its lease ran: %q; want what it waits for", liveDetails)
	}
	if dir := os.Getenv("SCREENSHOT_DIR"); dir != "" {
		screenshotHostPage(t, s, hostID, "pending-activities", filepath.Join(dir, "host-ui.png"))
	}
	if err := run.Get(ctx, nil); err != nil {
		t.Fatal(err)
	}

	// After: each lease's summary and result in the host's history.
	var summaries []string
	var outcomes []fetching.URLOutcome
	iter := s.tc.GetWorkflowHistory(ctx, hostID, "", false, 0)
	for iter.HasNext() {
		ev, err := iter.Next()
		if err != nil {
			t.Fatal(err)
		}
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == "FetchBatch" {
			var sum string
			_ = dc.FromPayload(ev.GetUserMetadata().GetSummary(), &sum)
			summaries = append(summaries, sum)
		}
		if a := ev.GetActivityTaskCompletedEventAttributes(); a != nil {
			var r fetching.LeaseResult
			if err := dc.FromPayloads(a.GetResult(), &r); err == nil {
				outcomes = append(outcomes, r.Outcomes...)
			}
		}
	}
	if len(summaries) == 0 || !strings.Contains(summaries[0], "h0000.test") || !strings.Contains(summaries[0], "delay 1.2s") {
		t.Errorf("lease summaries %q: want the host and its delay", summaries)
	}
	seen := map[string]bool{}
	for _, o := range outcomes {
		if o.Status == 200 && o.Bytes > 0 && o.Verdict != "" {
			seen[o.URL] = true
		}
	}
	if len(seen) != 6 {
		t.Errorf("the leases' results tell of %d pages (%+v); want the 6 the host has", len(seen), outcomes)
	}
	t.Logf("live: %d fetched, last %s, details %q; %d leases: %q", live.Fetched, live.LastURL, liveDetails, len(summaries), summaries)
}

// screenshotHostPage takes a tab of the Temporal UI's page of a host workflow (the dev
// server's UI at TEMPORAL_UI, default http://127.0.0.1:8233) for the README.
func screenshotHostPage(t *testing.T, s *stack, id, tab, file string) {
	ui := os.Getenv("TEMPORAL_UI")
	if ui == "" {
		ui = "http://127.0.0.1:8233"
	}
	resp, err := s.tc.DescribeWorkflowExecution(context.Background(), id, "")
	if err != nil {
		t.Fatal(err)
	}
	page := fmt.Sprintf("%s/namespaces/%s/workflows/%s/%s/%s", ui, s.cfg.TemporalNamespace, url.PathEscape(id), resp.GetWorkflowExecutionInfo().GetExecution().GetRunId(), tab)
	bctx := testenv.Browser(t)
	if err := chromedp.Do(bctx, chromedp.Navigate(page), chromedp.Sleep(3*time.Second)); err != nil {
		t.Fatalf("open %s: %v", page, err)
	}
	shot, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	_ = os.WriteFile(file, shot, 0o644)
}
