package activities

import (
	"context"
	"errors"
	"sync/atomic"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/trawlerdev/trawler/internal/admit"
	"github.com/trawlerdev/trawler/internal/blob"
	"github.com/trawlerdev/trawler/internal/content"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/failpoint"
	"github.com/trawlerdev/trawler/internal/membudget"
	"github.com/trawlerdev/trawler/internal/policy"
	"github.com/trawlerdev/trawler/internal/processing"
	"github.com/trawlerdev/trawler/internal/segment"
	"github.com/trawlerdev/trawler/internal/store"
)

// Processor runs on the process task queue: the process stage (internal/processing) with
// Temporal's heartbeats, metrics and logger.
type Processor struct {
	Store    *store.Store
	Blob     *blob.Store
	Crawls   *policy.Crawls
	Admitter *admit.Admitter
	Bodies   *segment.Reader // reads bodies by reference (nil: each its own object)
	Texts    *segment.Writer // where extracted texts go (nil: one content-addressed object each)
	// Stopping is closed when this worker begins to stop: a crawl's processing hands itself
	// on (a retryable failure, retried on a live worker in seconds) instead of waiting out
	// the stop timeout and then its heartbeat timeout.
	Stopping <-chan struct{}
	// Gate bounds the batches processed at once in this process (nil: no bound): activity
	// slots are many, because a crawl's processing holds one while it waits for pages.
	Gate chan struct{}
	// Parse bounds the memory this process's parsing takes at once (nil: no bound).
	Parse *membudget.Budget
	// PDF bounds the reading of one PDF (zero: content.DefaultPDFLimits).
	PDF content.PDFLimits
	// Beats sends a crawl's processing runs' heartbeats by task token (token_beats.go: the
	// worker's Temporal client; nil: through the SDK's activity.RecordHeartbeat).
	Beats heartbeater
}

// ProcessCrawl is the activity of a crawl's processing child (CrawlProcessingWorkflow): it
// claims and processes the crawl's fetched pages for a while.
func (p *Processor) ProcessCrawl(ctx context.Context, cp crawl.CrawlProcessing) (crawl.ProcessResult, error) {
	failpoint.Hit(failpoint.ProcessStarted)
	var done atomic.Int64 // pages processed: the heartbeat
	// Its beats are the ticker's alone: a run of minutes whose heartbeat a busy server answered
	// late must not end with the batches it holds (token_beats.go).
	bctx, finish, orphaned := beating(ctx, p.Beats, false, func() any { return done.Load() })
	stage := p.stage(bctx, nil)
	stage.Orphaned = orphaned
	res, err := stage.Crawl(bctx, cp, &done)
	if errors.Is(err, processing.ErrStopping) {
		err = temporal.NewApplicationError(err.Error(), "WorkerStopping")
	}
	return res, finish(err)
}

// Process processes a batch of pages the crawl's sweep found unprocessed.
func (p *Processor) Process(ctx context.Context, in crawl.ProcessInput) (crawl.ProcessResult, error) {
	failpoint.Hit(failpoint.ProcessStarted)
	var done atomic.Int64
	defer keepAlive(ctx, func() any { return done.Load() })()
	return p.stage(ctx, func(done int64) { activity.RecordHeartbeat(ctx, done) }).Pages(ctx, in.Host, in.Pages, &done)
}

// stage is the process stage over this worker's stores, reporting to ctx's activity; beat
// is told of each page processed (nil: not told).
func (p *Processor) stage(ctx context.Context, beat func(done int64)) *processing.Stage {
	return &processing.Stage{Store: p.Store.Documents(), Renders: p.Store.Renders(), Crawls: p.Crawls, Admit: admitDiscovered(ctx, p.Admitter),
		Body: p.body, StoreText: p.storeText, Gate: p.Gate, Parse: p.Parse, PDF: p.PDF, Stopping: p.Stopping,
		Hooks: processing.Hooks{
			Beat:  beat,
			Count: func(name string, n int64, tags ...string) { count(ctx, name, n, tags...) },
			Log:   activity.GetLogger(ctx),
		}}
}

// body reads a page's body by its reference.
func (p *Processor) body(ctx context.Context, ref string, limit int64) ([]byte, error) {
	if p.Bodies == nil {
		return p.Blob.GetBody(ctx, ref, limit)
	}
	return p.Bodies.Get(ctx, ref, limit)
}

// storeText puts a page's text into the process worker's current text segment (one PUT for
// every text it extracts in a few seconds) and returns its reference and the wait for the
// segment to be stored. Without a segment writer it stores the text alone.
func (p *Processor) storeText(ctx context.Context, crawlID string, text []byte) (string, func(context.Context) error, error) {
	if p.Texts == nil {
		key, err := p.Blob.PutText(ctx, text)
		return key, nil, err
	}
	return p.Texts.Add(crawlID, text)
}
