package activities

import (
	"context"
	"sync"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/trawlerdev/trawler/internal/crawl"
)

// Search attribute keys the Temporal UI filters by.
var (
	SearchHost      = temporal.NewSearchAttributeKeyKeyword("Host")
	SearchCrawlID   = temporal.NewSearchAttributeKeyKeyword("CrawlID")
	SearchHostState = temporal.NewSearchAttributeKeyKeyword("HostState")
)

// Waker wakes host workflows: Signal-With-Start of host/<authority>, one signal per host per
// batch, starting the workflow if it is not running.
type Waker struct {
	Client       client.Client
	TaskQueue    string // the workflow task queue
	FetchQueue   string
	ProcessQueue string
	IDPrefix     string // prefix of workflow IDs (TRAWLER_ID_PREFIX)
}

// Wake signals urls-added to each host's workflow, starting those that are not running.
func (w *Waker) Wake(ctx context.Context, crawlID string, cfg crawl.HostConfig, hosts []string) error {
	cfg.FetchQueue, cfg.ProcessQueue = w.FetchQueue, w.ProcessQueue
	sem := make(chan struct{}, 16)
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	for _, h := range hosts {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			opts := client.StartWorkflowOptions{
				ID:                    w.IDPrefix + crawl.HostWorkflowID(h),
				TaskQueue:             w.TaskQueue,
				WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
				TypedSearchAttributes: temporal.NewSearchAttributes(SearchHost.ValueSet(h), SearchCrawlID.ValueSet(crawlID),
					SearchHostState.ValueSet("active")),
				StaticSummary: crawl.HostSummary(h),
				Memo:          map[string]any{"host": h, "startedFor": crawlID},
			}
			_, err := w.Client.SignalWithStartWorkflow(ctx, opts.ID, crawl.SignalURLsAdded,
				crawl.URLsAdded{CrawlID: crawlID, Config: cfg}, opts, crawl.HostWorkflowName,
				crawl.HostInput{Host: h, Config: cfg, Revision: crawl.HostRevision})
			if err != nil {
				mu.Lock()
				if first == nil {
					first = errorf("wake %s: %w", h, err)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return first
}
