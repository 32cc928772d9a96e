package activities

import (
	"context"
	"errors"
	"sync/atomic"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/trawlerdev/trawler/internal/archiving"
	"github.com/trawlerdev/trawler/internal/blob"
	"github.com/trawlerdev/trawler/internal/gz"
	"github.com/trawlerdev/trawler/internal/metrics"
	"github.com/trawlerdev/trawler/internal/policy"
	"github.com/trawlerdev/trawler/internal/segment"
	"github.com/trawlerdev/trawler/internal/store"
)

// Archiver runs on the process task queue: it brings a crawl's WARC files up to date
// (internal/archiving, the archive stage), heartbeating every few seconds and counting what it
// writes.
type Archiver struct {
	Store    *store.Store
	Blob     *blob.Store
	Bodies   *segment.Reader // reads bodies by reference (nil: each its own object)
	Crawls   *policy.Crawls
	Software string // warcinfo's software field
	TempDir  string // where files are assembled before upload ("" = the OS default)
	// Beats sends its heartbeats by task token (token_beats.go: the worker's Temporal client;
	// nil: through the SDK's activity.RecordHeartbeat).
	Beats heartbeater
}

// ArchiveInput asks for a crawl's WARC output to be brought up to date. Unless Final, a file
// is only written once it is full (warc.maxBytes) or its oldest capture has waited warc.maxAge.
type ArchiveInput struct {
	CrawlID string `json:"crawlId"`
	Final   bool   `json:"final,omitempty"`
}

// ArchiveResult says what was written.
type ArchiveResult = archiving.Result

// WriteWARC writes the crawl's unarchived captures (none when its spec turns WARC off).
func (a *Archiver) WriteWARC(ctx context.Context, in ArchiveInput) (ArchiveResult, error) {
	ci, err := a.Crawls.Get(ctx, in.CrawlID)
	if err != nil {
		return ArchiveResult{}, err
	}
	job, ok := archiving.JobFor(in.CrawlID, in.Final, ci.Spec)
	if !ok {
		return ArchiveResult{}, nil
	}
	// Its beats go every few seconds, by task token, whatever it is doing: on the hour-long
	// bench the SDK's beat after a slow read of captures met a busy server and cancelled the
	// update, which its crawl then retried for minutes (token_beats.go).
	var after atomic.Int64
	bctx, finish, _ := beating(ctx, a.Beats, true, func() any { return after.Load() })
	w := archiving.Writer{Store: a.Store.Archive(), Blobs: a.Blob, Body: a.body, Payload: a.payload, Software: a.Software, TempDir: a.TempDir,
		Hooks: archiving.Hooks{
			Progress: func(id int64) { after.Store(id) },
			Wrote: func(file string, records int, bytes int64) {
				count(ctx, metrics.WARCRecords, int64(records))
				count(ctx, metrics.WARCBytes, bytes)
				activity.GetLogger(ctx).Info("wrote WARC file", "crawl", in.CrawlID, "file", file, "records", records, "bytes", bytes)
			},
		}}
	res, err := w.Write(bctx, job)
	if errors.Is(err, store.ErrNoCrawl) {
		// The crawl was released for deletion while its files were written: no attempt can
		// place them (SaveWARCFile). The deletion removes the crawl's WARC prefix as it lists
		// it; a file uploaded after that listing stays behind.
		err = temporal.NewNonRetryableApplicationError("WARC: crawl "+in.CrawlID+" is gone or being deleted", "WARCNoCrawl", err)
	}
	if err == nil && res.Busy && in.Final {
		// Another writer holds the crawl (an attempt the server gave up on, stopping within
		// its heartbeat timeout): the final write must not end the crawl without its files.
		err = temporal.NewApplicationError("WARC: another writer holds crawl "+in.CrawlID+"; the final write tries again", "WARCBusy")
	}
	return res, finish(err)
}

// payload reads a stored body or DOM by reference, with its compressed stream when its
// segment stored it spliceable.
func (a *Archiver) payload(ctx context.Context, key string) ([]byte, *gz.Deflated, error) {
	if a.Bodies != nil {
		return a.Bodies.GetDeflated(ctx, key, 1<<31)
	}
	data, err := a.Blob.GetBody(ctx, key, 1<<31)
	return data, nil, err
}

// body reads a stored body (or DOM) by reference.
func (a *Archiver) body(ctx context.Context, key string) ([]byte, error) {
	data, _, err := a.payload(ctx, key)
	return data, err
}
