package admit

import (
	"context"
	"errors"
	"sync"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/trawlerdev/trawler/internal/crawl"
)

// Waker wakes host workflows (host/<authority>): one start, or one signal to the running
// workflow, per host per batch.
type Waker struct {
	Client       client.Client
	TaskQueue    string // the workflow task queue
	FetchQueue   string
	ProcessQueue string
	IDPrefix     string // prefix of workflow IDs (TRAWLER_ID_PREFIX)
}

// Wake starts each host's workflow, or signals urls-added to it when it is running.
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
			err := w.wake(ctx, crawl.HostStart(w.IDPrefix, h, crawlID, w.TaskQueue), h, crawlID, cfg)
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

// wake starts a host's workflow, whose input carries what the signal would (a host whose queue
// ran dry has ended, so this is the common case, and a start alone is one history event
// fewer than Signal-With-Start's start and signal), and signals the run that is already
// there. A run that ends between the two is started again.
func (w *Waker) wake(ctx context.Context, opts client.StartWorkflowOptions, host, crawlID string, cfg crawl.HostConfig) error {
	opts.WorkflowExecutionErrorWhenAlreadyStarted = true
	var err error
	for range 3 {
		_, err = w.Client.ExecuteWorkflow(ctx, opts, crawl.HostWorkflowName, crawl.HostInput{Host: host, Config: cfg, Revision: crawl.WorkflowRevision})
		var running *serviceerror.WorkflowExecutionAlreadyStarted
		if !errors.As(err, &running) {
			return err
		}
		err = w.Client.SignalWorkflow(ctx, opts.ID, "", crawl.SignalURLsAdded, crawl.URLsAdded{CrawlID: crawlID, Config: cfg})
		var gone *serviceerror.NotFound
		if !errors.As(err, &gone) {
			return err
		}
	}
	return err
}
