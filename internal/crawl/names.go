package crawl

import (
	"fmt"
	"strings"

	"go.temporal.io/sdk/temporal"
)

// This file is the crawl's contract with Temporal and its operators, each name declared once:
// workflow, signal and query names (what `temporal workflow start/signal/query` take), task
// queues, search attributes and their values, crawl and URL vocabularies, and every workflow
// ID with its inverse. An ID may carry a deployment prefix (TRAWLER_ID_PREFIX) before it; the
// inverses look past it.

// Workflow, signal and query names.
const (
	CrawlWorkflowName           = "CrawlWorkflow"
	HostWorkflowName            = "HostWorkflow"
	CrawlProcessingWorkflowName = "CrawlProcessingWorkflow" // a crawl's processing children
	ProcessWorkflowName         = "ProcessPageWorkflow"     // a batch of pages the crawl's sweep found unprocessed
	DeliverWorkflowName         = "DeliverWorkflow"         // one output of a crawl (spec.outputs)

	SignalURLsAdded = "urls-added"
	SignalPause     = "pause"
	SignalResume    = "resume"
	SignalStop      = "stop"
	SignalThrottle  = "throttle"
	SignalAddSeeds  = "add-seeds"           // crawl: AddSeeds
	SignalReplay    = "replay-dead-letters" // crawl: Replay
	SignalBlock     = "block"               // crawl: Block
	SignalRedeliver = "replay-deliveries"   // a crawl's output: send its dead-lettered batches again

	QueryStatus   = "status"
	QueryProgress = "progress"
)

// Task queues a deployment uses unless configured otherwise (TRAWLER_TASK_QUEUE,
// TRAWLER_FETCH_TASK_QUEUE, TRAWLER_PROCESS_TASK_QUEUE, TRAWLER_RENDER_TASK_QUEUE).
const (
	WorkflowQueue = "trawler"         // crawl workflows and their children (hosts: HostQueue of it)
	FetchQueue    = "trawler-fetch"   // fetch leases: the requests
	ProcessQueue  = "trawler-process" // processing and WARC writing
	RenderQueue   = "trawler-render"  // rendering in headless Chromium (the render role)
)

// HostQueue is the workflow task queue host workflows run on: the deployment's workflow queue
// (TRAWLER_TASK_QUEUE) with "-hosts", polled by the same workflow workers. A crawl has one
// workflow and thousands of hosts; on one queue a busy worker takes its cached hosts' tasks
// first (the SDK polls a worker's sticky queue while it has a backlog), and a crawl workflow
// task that missed its worker's sticky queue waited behind the hosts' for ten minutes: no
// processing started meanwhile (BENCHMARKS.md, 2026-11-28 13:20). On their own queue the
// crawl's tasks, its processing and its deliveries never wait for a host's. Derived, not
// configured: every process of a deployment must agree on it.
func HostQueue(workflowQueue string) string { return workflowQueue + "-hosts" }

// OnHostQueue is the hosts' queue for a host run on queue: queue itself when it is one, else
// HostQueue of it (a run started on the workflow queue before hosts had their own).
func OnHostQueue(queue string) string {
	if strings.HasSuffix(queue, HostQueue("")) {
		return queue
	}
	return HostQueue(queue)
}

// WorkflowQueues is the visibility filter for every workflow of a deployment: those on its
// workflow queue and its hosts' (host runs started before HostQueue are on the first).
func WorkflowQueues(workflowQueue string) string {
	return fmt.Sprintf("TaskQueue IN ('%s', '%s')", workflowQueue, HostQueue(workflowQueue))
}

// Search attributes the workflows set; `trawler setup` registers them on a namespace.
var (
	SearchHost      = temporal.NewSearchAttributeKeyKeyword("Host")
	SearchCrawlID   = temporal.NewSearchAttributeKeyKeyword("CrawlID")
	SearchHostState = temporal.NewSearchAttributeKeyKeyword("HostState") // a HostPhase
)

// SearchAttributes lists every search attribute the workflows set.
func SearchAttributes() []temporal.SearchAttributeKey {
	return []temporal.SearchAttributeKey{SearchHost, SearchCrawlID, SearchHostState}
}

// HostPhase is what a host workflow is doing: its HostState search attribute and the state of
// its status query.
type HostPhase string

const (
	HostActive  HostPhase = "active"  // fetching, or waiting for its next request
	HostIdle    HostPhase = "idle"    // nothing due; waiting to be woken
	HostPaused  HostPhase = "paused"  // by a pause signal
	HostBackoff HostPhase = "backoff" // backing off after errors, 429/503 or a Retry-After
	HostParked  HostPhase = "parked"  // failing for long: retried rarely until retired
)

// HostPhases are the phases operators count hosts by (parked hosts, retried rarely, are not
// counted).
var HostPhases = []HostPhase{HostActive, HostIdle, HostBackoff, HostPaused}

// CrawlState is a crawl's state as Postgres keeps it.
type CrawlState string

const (
	CrawlRunning CrawlState = "running"
	CrawlPaused  CrawlState = "paused"
	CrawlStopped CrawlState = "stopped"
	CrawlDone    CrawlState = "done"
	// CrawlDeleting: the crawl's delete began (store's ReleaseCrawl); its rows are on their
	// way out, and nothing fetches or processes for it any more.
	CrawlDeleting CrawlState = "deleting"
)

// URLState is a URL's state in a crawl's frontier as Postgres keeps it (urls.state).
type URLState string

const (
	URLQueued  URLState = "queued"  // due at next_fetch_at (new, a retry, a recrawl)
	URLClaimed URLState = "claimed" // leased by a host workflow's fetch lease
	URLFetched URLState = "fetched" // stored; HTML awaiting processing
	URLDone    URLState = "done"    // nothing more to do
	URLSkipped URLState = "skipped" // not fetched, for its skip reason
	URLDead    URLState = "dead"    // failed for good: dead-lettered
)

// Source says how a URL entered the frontier.
type Source string

const (
	SourceSeed        Source = "seed"         // a crawl's seed, or one added later
	SourceLink        Source = "link"         // a link on a fetched page
	SourceRedirect    Source = "redirect"     // the target of a redirect
	SourceSitemap     Source = "sitemap"      // a page a sitemap lists
	SourceSitemapFile Source = "sitemap-file" // a sitemap or sitemap index document
	SourceFeed        Source = "feed"         // an item of an RSS or Atom feed
	SourceAPI         Source = "api"          // submitted through the HTTP API
	SourceEmbed       Source = "embed"        // a page's requisite (crawl.Requisites): archived, never followed
)

// CrawlWorkflowID is the ID of the crawl called name, in the deployment whose workflow IDs
// start with prefix (TRAWLER_ID_PREFIX; "" for none).
func CrawlWorkflowID(prefix, name string) string { return prefix + "crawl/" + name }

// CrawlOf is the crawl name in a crawl workflow's ID (after any deployment prefix).
func CrawlOf(workflowID string) (string, bool) {
	return after(workflowID, "crawl/")
}

// MaxIDLen bounds a crawl ID.
const MaxIDLen = 200

// CheckID says why id cannot name a crawl, nil when it can. A crawl's ID names its object
// prefixes (warc/ID/, segments/…/crawl=ID/), files and workflow IDs, so one character set
// holds for every way a crawl starts (spec.name, or the workflow ID of a `temporal workflow
// start` without one): 1 to 200 of A-Z a-z 0-9 . _ -, not "." or "..". A slash would let one
// crawl's prefix hold another's (crawls and crawls/x).
func CheckID(id string) error {
	switch {
	case id == "" || len(id) > MaxIDLen:
		return fmt.Errorf("crawl ID %q: want 1 to %d characters", Clip(id, MaxFieldBytes), MaxIDLen)
	case id == "." || id == "..":
		return fmt.Errorf("crawl ID %q names a directory", id)
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("crawl ID %q: %q is not allowed (letters, digits, '.', '_' and '-' only)", Clip(id, MaxFieldBytes), c)
		}
	}
	return nil
}

// HostWorkflowID is the ID of the one workflow that fetches from host (an authority), in the
// deployment whose workflow IDs start with prefix (TRAWLER_ID_PREFIX; "" for none).
func HostWorkflowID(prefix, host string) string { return prefix + "host/" + host }

// HostOf is the host in a host workflow's ID (after any deployment prefix).
func HostOf(workflowID string) (string, bool) { return after(workflowID, "host/") }

// Claim owners name who holds a claim on frontier rows (urls, renders): a retry of the same
// fetch lease, processing child or render run builds the same owner, and so takes its own
// claims back.

// LeaseOwner owns the first and last claims of the n-th fetch lease of a host workflow's run.
func LeaseOwner(runID string, n int) string { return fmt.Sprintf("host:%s/%d", runID, n) }

// ChunkOwner owns the claims a fetch lease makes between its first and last ("/top-up": the
// name it had when these were a batch's top-ups, kept so claims made before stay found).
func ChunkOwner(leaseOwner string) string { return leaseOwner + "/top-up" }

// LeaseOwners is every claim owner a fetch lease's URLs are claimed under.
func LeaseOwners(leaseOwner string) []string { return []string{leaseOwner, ChunkOwner(leaseOwner)} }

// RenderOwner owns the render claims of the render run a crawl workflow's run started at its
// tick-th progress look.
func RenderOwner(runID string, tick int) string { return fmt.Sprintf("%s/render/%d", runID, tick) }

// RenderAttemptOwner owns the render claims of one attempt of a render run.
func RenderAttemptOwner(runOwner string, attempt int32) string {
	return fmt.Sprintf("%s#%d", runOwner, attempt)
}

// FetchKey names one fetch attempt of a URL (its crawl, hash, fetch count and attempt): a
// retried activity reuses it, so the fetch is recorded once, and WARC record IDs derive from it.
func FetchKey(crawlID string, hash []byte, fetchCount, attempt int) string {
	return fmt.Sprintf("%s/%x/%d/%d", crawlID, hash, fetchCount, attempt)
}

// DeadLetterKey names a URL's dead letter: the fetch key of the attempt that killed it, or,
// when no request was made (robots.txt unreachable, a refused address), the URL and its
// attempts, so a retried activity records the dead letter once.
func DeadLetterKey(fetchKey, crawlID string, hash []byte, attempts int) string {
	if fetchKey != "" {
		return fetchKey
	}
	return fmt.Sprintf("%s/%x/%d", crawlID, hash, attempts)
}

// CrawlProcessID is the ID of the seq-th processing child of a crawl workflow's run.
func CrawlProcessID(crawlWorkflowID, originalRunID string, seq int) string {
	return fmt.Sprintf("%s/process/%s-%d", crawlWorkflowID, originalRunID, seq)
}

// DeliverID is the ID of the workflow that delivers a crawl's documents to its output called
// output (spec.outputs), beside the crawl workflow's own ID.
func DeliverID(crawlWorkflowID, output string) string { return crawlWorkflowID + "/deliver/" + output }

// ReprocessID is the ID of the child a crawl workflow's run hands stale pages to, at its
// tick-th progress look.
func ReprocessID(crawlWorkflowID, originalRunID string, tick int) string {
	return fmt.Sprintf("%s/reprocess/%s-%d", crawlWorkflowID, originalRunID, tick)
}

// after is what follows the last kind ("crawl/", "host/") in id: the deployment's prefix
// may hold anything, a crawl name or an authority never holds a slash.
func after(id, kind string) (string, bool) {
	i := strings.LastIndex(id, kind)
	if i < 0 {
		return "", false
	}
	rest := id[i+len(kind):]
	return rest, rest != "" && !strings.Contains(rest, "/")
}

// RunningCrawlsQuery is the visibility query for a deployment's running crawl workflows (its
// workflow task queue tells deployments sharing a namespace apart).
func RunningCrawlsQuery(taskQueue string) string {
	return fmt.Sprintf("WorkflowType = '%s' AND ExecutionStatus = 'Running' AND TaskQueue = '%s'", CrawlWorkflowName, taskQueue)
}

// HostsInPhaseQuery is the visibility query for a deployment's running host workflows in phase
// (taskQueue is the deployment's workflow queue).
func HostsInPhaseQuery(taskQueue string, phase HostPhase) string {
	return fmt.Sprintf("WorkflowType = '%s' AND ExecutionStatus = 'Running' AND %s AND %s = '%s'",
		HostWorkflowName, WorkflowQueues(taskQueue), SearchHostState.GetName(), phase)
}

// Why a crawl stopped before it was drained (CrawlProgress.StopReason).
const (
	StopBySignal   = "stop signal"
	StopByDuration = "maxDuration reached"
	StopByBytes    = "maxBytes reached"
)
