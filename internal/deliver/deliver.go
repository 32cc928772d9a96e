// Package deliver owns delivering a crawl's documents to its outputs while it runs
// (spec.outputs): reading them in the order their saves committed from the output's cursor,
// sending each batch of records to a webhook or writing it as Parquet parts of a dataset in
// the bucket, moving the cursor only once a batch is delivered, and dead-lettering a batch
// whose last try failed. Deliveries are at least once: a batch tried again (a retry, a worker
// that died after sending) comes again, each record with the same key (export.Key).
package deliver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/export"
	"github.com/trawlerdev/trawler/internal/metrics"
	"github.com/trawlerdev/trawler/internal/store"
)

// Store is what delivery needs of the store: the crawl's spec, and the outputs' cursors,
// documents and dead letters (the deliveries aggregate owns those rows).
type Store interface {
	CrawlSpec(ctx context.Context, id string, dst any) error
	Position(ctx context.Context, crawlID, output string) (store.Cursor, int, error)
	Ended(ctx context.Context, crawlID string, at store.Cursor, settle time.Duration) (bool, error)
	Pages(ctx context.Context, crawlID string, after store.Cursor, upTo *store.Cursor, limit int) ([]store.DeliveredPage, error)
	Advance(ctx context.Context, crawlID, output string, from, to store.Cursor, records int) (bool, error)
	Counted(ctx context.Context, crawlID, output string, records int) error
	Failed(ctx context.Context, crawlID, output string, at store.Cursor, why string) (int, error)
	DeadLetter(ctx context.Context, crawlID, output string, b store.DeadBatch) error
	DeadBatches(ctx context.Context, crawlID, output string, limit int) ([]store.DeadBatch, error)
	Replayed(ctx context.Context, crawlID, output string, id int64) error
	ReplayFailed(ctx context.Context, crawlID, output string, id int64, why string) error
}

// StoreOf joins the store's aggregates delivery reads.
func StoreOf(s *store.Store) Store {
	return struct {
		store.Crawls
		store.Deliveries
	}{s.Crawls(), s.Deliveries()}
}

// Deliverer sends batches of an output. Its fields are its dependencies.
type Deliverer struct {
	Store   Store
	Records *export.Source // the record writer (and the text segments records read)
	Webhook *Webhook       // POSTs webhook batches (nil: webhook outputs fail)
	Dataset *Dataset       // writes dataset parts (nil: dataset outputs fail)
	Log     *slog.Logger
	// Count is told what happened (a metrics.Delivered… name, the output's kind, how many);
	// nil: nothing is counted.
	Count func(ctx context.Context, name, kind string, n int)
}

// Input is one run of an output's delivery.
type Input struct {
	CrawlID string `json:"crawlId"`
	Output  string `json:"output"`
	// Replay sends the output's dead-lettered batches again first.
	Replay bool `json:"replay,omitempty"`
	// For is how long the run keeps sending batches before it returns (0: DefaultRunFor).
	For time.Duration `json:"for,omitempty"`
}

// Result says what one run delivered and whether the output is done.
type Result struct {
	Records  int  `json:"records"`
	Batches  int  `json:"batches"`
	Dead     int  `json:"dead,omitempty"`     // records dead-lettered
	Replayed int  `json:"replayed,omitempty"` // dead-lettered batches sent again
	CaughtUp bool `json:"caughtUp"`           // every document saved so far is delivered
	// Ended: the crawl is over (or gone, or the output no longer in its spec) and everything
	// it stored is delivered: nothing will come after.
	Ended bool `json:"ended"`
	// ReplayLeft: dead-lettered batches are still to be sent again (the run ran out of time).
	ReplayLeft bool `json:"replayLeft,omitempty"`
	// ReplayError is why a dead-lettered batch could not be sent again (it stays dead).
	ReplayError string `json:"replayError,omitempty"`
}

// DefaultRunFor is how long one run keeps sending: long enough for many batches, short enough
// that a run's heartbeats and retries stay cheap.
const DefaultRunFor = 30 * time.Second

// maxBatchBytes bounds one batch's records (a POST's body, a part's rows): a batch stops
// early once past it, whatever its size in records.
const maxBatchBytes = 8 << 20

// endSettle is how long after a crawl ended its output may still see documents come: the
// last requests land within the crawl's request timeout, and their pages are then processed
// (their fetched rows say so meanwhile).
const endSettle = 15 * time.Second

// Permanent marks a failure that trying again cannot mend (a receiver's 4xx, an address the
// guard refuses): the batch is dead-lettered at once.
type Permanent struct{ Err error }

func (p *Permanent) Error() string { return p.Err.Error() }
func (p *Permanent) Unwrap() error { return p.Err }

// sink is where one output's batches go.
type sink interface {
	send(ctx context.Context, b *batch) error
}

// batch is one batch of an output: its documents' range and their encoded records.
type batch struct {
	crawlID, output string
	id              string // the same for every try of the batch (its start)
	from, to        store.Cursor
	pages           []store.DeliveredPage
	attempt         int // which try of the batch this is
}

// Run delivers what the output has not delivered yet, for up to in.For, calling beat after
// each batch. A batch that fails fails the run (the caller retries it after a backoff) until
// its failed tries reach the output's maxAttempts: then it is dead-lettered and the run goes
// on. A receiver that refuses a batch for good has it dead-lettered at once.
func (d *Deliverer) Run(ctx context.Context, in Input, beat func(Result)) (Result, error) {
	var res Result
	var spec crawl.Spec
	if err := d.Store.CrawlSpec(ctx, in.CrawlID, &spec); err != nil {
		if errors.Is(err, store.ErrNoCrawl) {
			return Result{CaughtUp: true, Ended: true}, nil
		}
		return res, err
	}
	out, ok := spec.OutputNamed(in.Output)
	if !ok {
		return Result{CaughtUp: true, Ended: true}, nil
	}
	sk, err := d.sinkFor(spec, out)
	if err != nil {
		return res, err
	}
	runFor := in.For
	if runFor <= 0 {
		runFor = DefaultRunFor
	}
	until := time.Now().Add(runFor)
	if in.Replay {
		if err := d.replay(ctx, in, out, sk, until, &res, beat); err != nil {
			return res, err
		}
	}
	for time.Now().Before(until) {
		from, tries, err := d.Store.Position(ctx, in.CrawlID, in.Output)
		if errors.Is(err, store.ErrNoCrawl) {
			return Result{CaughtUp: true, Ended: true}, nil
		}
		if err != nil {
			return res, err
		}
		pages, err := d.Store.Pages(ctx, in.CrawlID, from, nil, out.Batch())
		if err != nil {
			return res, err
		}
		if len(pages) == 0 {
			res.CaughtUp = true
			res.Ended, err = d.Store.Ended(ctx, in.CrawlID, from, spec.WithDefaults().RequestTimeout.D()+endSettle)
			return res, err
		}
		b := &batch{crawlID: in.CrawlID, output: in.Output, id: batchID(from), from: from, pages: pages, attempt: tries + 1}
		if err := sk.send(ctx, b); err != nil {
			if err := d.failed(ctx, out, b, err, &res); err != nil {
				return res, err
			}
		} else {
			n := countUpTo(b.pages, b.to)
			if _, err := d.Store.Advance(ctx, in.CrawlID, in.Output, from, b.to, n); err != nil {
				return res, err
			}
			res.Records += n
			res.Batches++
			d.count(ctx, metrics.Delivered, out, n)
		}
		if beat != nil {
			beat(res)
		}
	}
	return res, nil
}

// count tells Count, when set.
func (d *Deliverer) count(ctx context.Context, name string, out crawl.Output, n int) {
	if d.Count == nil || n == 0 {
		return
	}
	kind := "dataset"
	if out.Webhook != nil {
		kind = "webhook"
	}
	d.Count(ctx, name, kind, n)
}

// failed handles a batch that could not be delivered: it counts the try, and the run fails
// (to be retried after a backoff) unless the batch is past its last try or refused for good,
// when it is dead-lettered and the run goes on. A run cancelled (a worker stopping) is no
// try of the batch's.
func (d *Deliverer) failed(ctx context.Context, out crawl.Output, b *batch, sendErr error, res *Result) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	why := crawl.ClipError(sendErr.Error())
	var perm *Permanent
	permanent := errors.As(sendErr, &perm)
	tries, err := d.Store.Failed(ctx, b.crawlID, b.output, b.from, why)
	if err != nil {
		return err
	}
	d.count(ctx, metrics.DeliveryFailures, out, 1)
	if !permanent && tries < out.Attempts() {
		return fmt.Errorf("deliver: %s/%s batch %s (try %d of %d): %s", b.crawlID, b.output, b.id, b.attempt, out.Attempts(), why)
	}
	if b.to.Tx == "" { // nothing encoded: the whole read batch is the dead one
		b.to = b.pages[len(b.pages)-1].At
	}
	n := countUpTo(b.pages, b.to)
	d.log().Warn("dead-lettering a delivery batch", "crawl", b.crawlID, "output", b.output, "batch", b.id, "records", n,
		"tries", tries, "permanent", permanent, "error", why)
	if err := d.Store.DeadLetter(ctx, b.crawlID, b.output, store.DeadBatch{From: b.from, To: b.to, Records: n,
		Attempts: max(tries, 1), Error: why}); err != nil {
		return err
	}
	res.Dead += n
	d.count(ctx, metrics.DeliveryDead, out, n)
	return nil
}

// replay sends the output's dead-lettered batches again until the run's time is up, each as
// one or more batches of the documents in its range (a document changed since has moved on,
// and is delivered there). A batch that fails again stays dead, its error recorded, and the
// replay stops there: the output's own delivery goes on.
func (d *Deliverer) replay(ctx context.Context, in Input, out crawl.Output, sk sink, until time.Time, res *Result, beat func(Result)) error {
	dead, err := d.Store.DeadBatches(ctx, in.CrawlID, in.Output, 100)
	if err != nil {
		return err
	}
	for _, db := range dead {
		from := db.From
		for {
			if !time.Now().Before(until) {
				res.ReplayLeft = true
				return nil
			}
			pages, err := d.Store.Pages(ctx, in.CrawlID, from, &db.To, out.Batch())
			if err != nil {
				return err
			}
			if len(pages) == 0 {
				break
			}
			b := &batch{crawlID: in.CrawlID, output: in.Output, id: batchID(from), from: from, pages: pages, attempt: db.Attempts + 1}
			if err := sk.send(ctx, b); err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				res.ReplayError = crawl.ClipError(err.Error())
				d.log().Warn("a dead-lettered batch failed again", "crawl", in.CrawlID, "output", in.Output, "dead", db.ID, "error", res.ReplayError)
				return d.Store.ReplayFailed(ctx, in.CrawlID, in.Output, db.ID, res.ReplayError)
			}
			n := countUpTo(b.pages, b.to)
			if err := d.Store.Counted(ctx, in.CrawlID, in.Output, n); err != nil {
				return err
			}
			res.Records += n
			res.Batches++
			d.count(ctx, metrics.Delivered, out, n)
			from = b.to
			if beat != nil {
				beat(*res)
			}
		}
		if err := d.Store.Replayed(ctx, in.CrawlID, in.Output, db.ID); err != nil {
			return err
		}
		res.Replayed++
	}
	res.ReplayLeft = len(dead) == 100 // more than one look's worth: the next run goes on
	return nil
}

func (d *Deliverer) sinkFor(spec crawl.Spec, out crawl.Output) (sink, error) {
	switch {
	case out.Webhook != nil:
		if d.Webhook == nil {
			return nil, errors.New("deliver: this worker sends no webhooks")
		}
		return &webhookSink{w: d.Webhook, d: d, spec: spec, out: out}, nil
	case out.Dataset != nil:
		if d.Dataset == nil {
			return nil, errors.New("deliver: this worker writes no datasets")
		}
		return &datasetSink{ds: d.Dataset, d: d, spec: spec, out: out}, nil
	}
	return nil, fmt.Errorf("deliver: output %s is neither a webhook nor a dataset", out.Name)
}

func (d *Deliverer) log() *slog.Logger {
	if d.Log != nil {
		return d.Log
	}
	return slog.Default()
}

// batchID names a batch by where it starts: every try of it carries the same.
func batchID(from store.Cursor) string {
	h := from.Hash
	if len(h) > 8 {
		h = h[:8]
	}
	tx := from.Tx
	if tx == "" {
		tx = "0"
	}
	return fmt.Sprintf("%s-%x", tx, h)
}

// countUpTo counts the pages up to and including cursor to.
func countUpTo(pages []store.DeliveredPage, to store.Cursor) int {
	for i, p := range pages {
		if p.At.Same(to) {
			return i + 1
		}
	}
	return len(pages)
}
