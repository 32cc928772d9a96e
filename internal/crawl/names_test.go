package crawl

import (
	"strings"
	"testing"
)

// Every workflow ID the crawl builds reads back to what it was built from, behind a
// deployment's prefix too; an ID of another kind reads back to nothing.
func TestWorkflowIDsReadBack(t *testing.T) {
	for _, prefix := range []string{"", "prod-", "team/a/", "host/"} {
		if got, ok := CrawlOf(CrawlWorkflowID(prefix, "news-2026")); !ok || got != "news-2026" {
			t.Errorf("CrawlOf(%q) = %q, %v", CrawlWorkflowID(prefix, "news-2026"), got, ok)
		}
		for _, host := range []string{"example.com", "ghost.example:8080", "[::1]:8443"} {
			if got, ok := HostOf(HostWorkflowID(prefix, host)); !ok || got != host {
				t.Errorf("HostOf(%q) = %q, %v", HostWorkflowID(prefix, host), got, ok)
			}
		}
	}
	crawlID := CrawlWorkflowID("prod-", "c")
	for _, id := range []string{CrawlProcessID(crawlID, "r", 1), ReprocessID(crawlID, "r", 6), "crawl/", "host/", "something-else"} {
		if h, ok := HostOf(id); ok {
			t.Errorf("HostOf(%q) = %q, want none", id, h)
		}
		if id != crawlID && strings.HasPrefix(id, crawlID+"/") {
			if c, ok := CrawlOf(id); ok {
				t.Errorf("CrawlOf(%q) = %q: a crawl's child is not the crawl", id, c)
			}
		}
	}
	if CrawlProcessID(crawlID, "r", 1) == ReprocessID(crawlID, "r", 1) || ChunkOwner(LeaseOwner("r", 1)) == LeaseOwner("r", 1) {
		t.Error("children's IDs collide")
	}
}

// The visibility queries name the phase's search attribute and the deployment's queues: hosts
// run on their own (HostQueue), and those started before it on the workflow queue.
func TestVisibilityQueries(t *testing.T) {
	if HostQueue("trawler") == "trawler" || OnHostQueue("trawler") != "trawler-hosts" || OnHostQueue("trawler-hosts") != "trawler-hosts" {
		t.Fatal("hosts share the crawl workflows' queue, or a host run would not move to its own")
	}
	q := HostsInPhaseQuery("trawler", HostBackoff)
	for _, want := range []string{"WorkflowType = 'HostWorkflow'", "TaskQueue IN ('trawler', 'trawler-hosts')", "HostState = 'backoff'", "ExecutionStatus = 'Running'"} {
		if !strings.Contains(q, want) {
			t.Errorf("%q lacks %q", q, want)
		}
	}
	if q := RunningCrawlsQuery("q1"); !strings.Contains(q, "WorkflowType = 'CrawlWorkflow'") || !strings.Contains(q, "TaskQueue = 'q1'") {
		t.Errorf("RunningCrawlsQuery: %q", q)
	}
}
