package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	sdkpb "go.temporal.io/api/sdk/v1"
	"go.temporal.io/sdk/converter"

	"github.com/trawlerdev/trawler/internal/crawl"
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
