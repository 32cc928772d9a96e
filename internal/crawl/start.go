package crawl

import (
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
)

// The one place crawl and host workflows get their start options: ID (with the deployment's
// prefix), queue, search attributes, and the summary and memo the Temporal UI shows.

// CrawlSummary is the one-line summary the Temporal UI shows for a crawl's workflow.
func CrawlSummary(spec Spec) string {
	return fmt.Sprintf("Crawl %s: %d seeds, scope %s; query `progress`, signal `pause`/`resume`/`stop`/`throttle`/`add-seeds`/`block`",
		spec.Name, len(spec.Seeds), spec.Scope)
}

// CrawlStart is how a crawl workflow is started (`trawler crawl`, and the tests; `temporal
// workflow start` with plain JSON gets the same workflow without the summary and memo).
func CrawlStart(idPrefix string, spec Spec, taskQueue string) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{
		ID:                    CrawlWorkflowID(idPrefix, spec.Name),
		TaskQueue:             taskQueue,
		TypedSearchAttributes: temporal.NewSearchAttributes(SearchCrawlID.ValueSet(spec.Name)),
		StaticSummary:         CrawlSummary(spec),
		Memo:                  map[string]any{"crawl": spec.Name, "seeds": len(spec.Seeds), "scope": string(spec.Scope)},
	}
}

// HostSummary is the one-line summary the Temporal UI shows for a host's workflow.
func HostSummary(host string) string {
	return "Fetches from " + host + " for every crawl: one request per crawl-delay; query `status`, signal `pause`/`resume`/`throttle`"
}

// HostTaskTimeout is a host workflow's workflow task timeout: long enough for a run's first
// lease, a local activity of up to about HostConfig.LocalLease plus its last chunk, to finish
// inside one workflow task (the SDK keeps a longer one alive by completing the task and taking
// a new one, three events each time). A workflow worker that dies holding a task delays that
// host by this much.
const HostTaskTimeout = 30 * time.Second

// HostStart is how every host workflow is started — by admission waking a host, and by an
// operator's signal to a host that is not running — so each carries the same ID (with the
// deployment's prefix), queue (the hosts' own, HostQueue of the deployment's workflow queue
// taskQueue), search attributes (Host, HostState, and CrawlID when a crawl started it),
// summary and memo.
func HostStart(idPrefix, host, crawlID, taskQueue string) client.StartWorkflowOptions {
	attrs := []temporal.SearchAttributeUpdate{SearchHost.ValueSet(host), SearchHostState.ValueSet(string(HostActive))}
	memo := map[string]any{"host": host}
	if crawlID != "" {
		attrs = append(attrs, SearchCrawlID.ValueSet(crawlID))
		memo["startedFor"] = crawlID
	}
	return client.StartWorkflowOptions{
		ID:                    HostWorkflowID(idPrefix, host),
		TaskQueue:             HostQueue(taskQueue),
		WorkflowTaskTimeout:   HostTaskTimeout,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		TypedSearchAttributes: temporal.NewSearchAttributes(attrs...),
		StaticSummary:         HostSummary(host),
		Memo:                  memo,
	}
}
