package processing

import (
	"context"
	"time"

	"github.com/trawlerdev/trawler/internal/admit"
	"github.com/trawlerdev/trawler/internal/content"
	"github.com/trawlerdev/trawler/internal/hooks"
	"github.com/trawlerdev/trawler/internal/membudget"
	"github.com/trawlerdev/trawler/internal/policy"
	"github.com/trawlerdev/trawler/internal/store"
)

// Store is what the process stage reads and writes of the crawl's records.
type Store interface {
	// ClaimFetched claims up to limit of a crawl's fetched pages for owner, held for hold,
	// taking back at once what back names, of those that began to wait at from or later
	// (zero: all).
	ClaimFetched(ctx context.Context, crawlID, owner string, limit int, hold time.Duration, back store.TakeBack, from time.Time) (store.ProcessingClaim, error)
	// SaveDocuments saves documents and their links in one transaction.
	SaveDocuments(ctx context.Context, saves []store.DocumentSave) ([]*store.Dup, error)
	// SaveDocument saves one (when the batch holds what Postgres refuses).
	SaveDocument(ctx context.Context, d store.Document, links []store.Link, near *store.NearDup) (*store.Dup, error)
	// MarkDone sets a page aside as done, with the reason, for the fetch whose body was read.
	MarkDone(ctx context.Context, crawlID string, hash []byte, bodyKey, reason string) error
	// FinishProcessed marks saved documents' pages done.
	FinishProcessed(ctx context.Context, docs []store.Document) error
}

// Renders is the render queue the stage adds the crawl's pages to (store.Renders).
type Renders interface {
	// QueueRenders queues pages for the crawl's render runs.
	QueueRenders(ctx context.Context, crawlID string, hashes [][]byte) error
}

// Hooks are told of the stage's progress (nil: not told).
type Hooks struct {
	Beat  func(done int64) // after each page: a heartbeat
	Count hooks.Counter    // a metric series
	Log   hooks.Logger
}

func (h Hooks) beat(done int64) {
	if h.Beat != nil {
		h.Beat(done)
	}
}

func (h Hooks) log() hooks.Logger { return hooks.Log(h.Log) }

// Stage processes fetched pages: parse, store text and documents, record links, admit new
// URLs (waking their hosts) and queue renders.
type Stage struct {
	Store   Store          // the crawl's fetched pages and their documents (store.Documents)
	Renders Renders        // where pages to render go
	Crawls  *policy.Crawls // each crawl's rules (their specs cached; Put fills it without a store)
	// Admit admits a discovered batch of a crawl (admit.Admitter.AdmitDiscovered in a worker).
	Admit func(ctx context.Context, ci *policy.Crawl, d *admit.Discovery) (admit.AdmitStats, error)
	// Body reads a page's body by reference, at most limit bytes.
	Body func(ctx context.Context, ref string, limit int64) ([]byte, error)
	// StoreText stores a page's text and returns its reference and the wait for it to be
	// stored (nil: stored already).
	StoreText func(ctx context.Context, crawlID string, text []byte) (string, func(context.Context) error, error)
	// Gate bounds the batches parsed at once in this process (nil: no bound).
	Gate chan struct{}
	// Parse bounds the memory parsing takes at once in this process (nil: no bound): a page
	// takes ParseCost of its size before its body is read, and gives it back once parsed.
	Parse *membudget.Budget
	// PDF bounds the reading of one PDF (zero: content.DefaultPDFLimits).
	PDF content.PDFLimits
	// Stopping is closed when this worker begins to stop: a crawl's processing returns
	// ErrStopping instead of waiting for more pages.
	Stopping <-chan struct{}
	// Orphaned is closed when Temporal no longer knows this run's attempt (it timed the run
	// out while it ran, its beats late on a busy server; or its workflow closed): the run
	// finishes the batches in hand and ends, claiming no more (nil: never).
	Orphaned <-chan struct{}
	Hooks    Hooks
}
