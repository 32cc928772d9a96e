package admit

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/trawlerdev/trawler/internal/crawl"
)

// Waker wakes host workflows (host/<authority>): one start, or one signal to the running
// workflow, per host per batch.
type Waker struct {
	Client       client.Client
	TaskQueue    string // the deployment's workflow task queue (hosts run on crawl.HostQueue of it)
	FetchQueue   string
	ProcessQueue string
	IDPrefix     string // prefix of workflow IDs (TRAWLER_ID_PREFIX)
	// LocalLease is how long a host run's first lease may run as a local activity in the
	// workflow worker (TRAWLER_LOCAL_LEASE; 0: none).
	LocalLease crawl.Duration
}

// Wake starts each host's workflow, or signals urls-added to it when it is running.
func (w *Waker) Wake(ctx context.Context, crawlID string, cfg crawl.HostConfig, hosts []string) error {
	cfg.FetchQueue, cfg.ProcessQueue, cfg.LocalLease = w.FetchQueue, w.ProcessQueue, w.LocalLease
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

// wakeLaterFor bounds a background wake: past it the crawl's sweep wakes the rest.
const wakeLaterFor = 10 * time.Minute

// WakeLater wakes hosts as Wake does, in the background: it returns at once. A failure is
// logged, as Wake's callers do; the crawl's sweep wakes the hosts that missed it.
func (w *Waker) WakeLater(crawlID string, cfg crawl.HostConfig, hosts []string) {
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), wakeLaterFor)
		defer cancel()
		if err := w.Wake(ctx, crawlID, cfg, hosts); err != nil {
			slog.Warn("waking a crawl's seeded hosts failed; the crawl sweep will retry", "crawl", crawlID, "hosts", len(hosts), "error", err)
		}
	}()
}

// wake starts a host's workflow, whose input carries what the signal would (a host whose queue
// ran dry has ended, so this is the common case, and a start alone is one history event
// fewer than Signal-With-Start's start and signal), and signals the run that is already
// there. A run that ends between the two is started again.
func (w *Waker) wake(ctx context.Context, opts client.StartWorkflowOptions, host, crawlID string, cfg crawl.HostConfig) error {
	opts.WorkflowExecutionErrorWhenAlreadyStarted = true
	// Eager start: when this process also runs the workflow worker (the crawl's start runs in
	// it), the server hands the host's first workflow task back in the start's own response,
	// so it neither waits in the task queue behind a thousand others nor costs the queue's
	// writes and reads, nor a load of the new workflow's state. The SDK starts it the usual
	// way when no local worker has a free slot (or the server has eager start off).
	opts.EnableEagerStart = true
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
