package archiving

import (
	"context"
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/gz"
	"github.com/trawlerdev/trawler/internal/store"
)

// Store is what the archive stage reads and writes of the crawl's records.
type Store interface {
	// LockArchive holds the crawl's archive for one writer at a time (ok false: another has it).
	LockArchive(ctx context.Context, crawlID string) (release func(), ok bool, err error)
	// OldestUnarchived is when the oldest capture in no file was fetched, and the bytes waiting.
	OldestUnarchived(ctx context.Context, crawlID string) (time.Time, int64, error)
	// Unarchived lists up to limit captures in no file, in fetch order, after fetch afterID.
	Unarchived(ctx context.Context, crawlID string, afterID int64, limit int) ([]store.Capture, error)
	// SaveWARCFile records a written file and where each of its captures went.
	SaveWARCFile(ctx context.Context, f store.WARCFile) error
	// UnarchivedRenders lists up to limit finished renders whose DOM is in no file.
	UnarchivedRenders(ctx context.Context, crawlID string, limit int) ([]store.RenderCapture, error)
	// RendersArchived records that renders went into file.
	RendersArchived(ctx context.Context, file string, rs []store.RenderCapture) error
}

// Blobs is where the files and their indexes go.
type Blobs interface {
	PutFile(ctx context.Context, key, path, contentType string) error
	Put(ctx context.Context, key string, data []byte, contentType string) error
}

// Hooks are told of the stage's progress (nil: not told).
type Hooks struct {
	Progress func(afterID int64)                         // after each read of captures: a heartbeat
	Wrote    func(file string, records int, bytes int64) // after each file is stored
}

// Writer writes a crawl's WARC files.
type Writer struct {
	Store Store
	Blobs Blobs
	// Body reads a stored body or DOM by reference.
	Body func(ctx context.Context, key string) ([]byte, error)
	// Payload reads a response's stored body or a rendered DOM by reference, with its
	// compressed stream when it was stored spliceable (nil: Body, the record compressed whole).
	Payload  func(ctx context.Context, key string) ([]byte, *gz.Deflated, error)
	Software string // warcinfo's software field
	TempDir  string // where files are assembled before upload ("" = the OS default)
	Hooks    Hooks
	// Now is the time files are named and aged by (nil: time.Now).
	Now func() time.Time
}

// Job is one bringing up to date of a crawl's files. Unless Final, a file is only written once
// it is full (MaxBytes) or its oldest capture has waited MaxAge.
type Job struct {
	CrawlID  string
	Final    bool
	MaxBytes int64
	MaxAge   time.Duration
}

// JobFor is a crawl's job as its spec sets it; ok is false when the spec turns WARC off.
func JobFor(crawlID string, final bool, spec crawl.Spec) (job Job, ok bool) {
	if spec.WARC.Off {
		return Job{}, false
	}
	return Job{CrawlID: crawlID, Final: final, MaxBytes: spec.WARC.MaxBytes, MaxAge: spec.WARC.MaxAge.D()}, true
}

// Result says what was written.
type Result struct {
	Files   int   `json:"files"`
	Records int   `json:"records"`
	Bytes   int64 `json:"bytes"`
	Busy    bool  `json:"busy,omitempty"` // another writer holds the crawl
}

// batch is how many captures are read per query.
const batch = 200

// Write writes the crawl's unarchived renders, then its captures.
func (w *Writer) Write(ctx context.Context, job Job) (Result, error) {
	var res Result
	release, ok, err := w.Store.LockArchive(ctx, job.CrawlID)
	if err != nil || !ok {
		res.Busy = err == nil
		return res, err
	}
	defer release()
	// Rendered DOMs go out first, in files of their own: each a conversion record referring
	// to the response it was rendered from, which may sit in an earlier file.
	if err := w.writeRenders(ctx, job.CrawlID, &res); err != nil {
		return res, err
	}
	oldest, pending, err := w.Store.OldestUnarchived(ctx, job.CrawlID)
	if err != nil || oldest.IsZero() {
		return res, err
	}
	ready := func(size int64) bool {
		return job.Final || size >= job.MaxBytes || w.now().Sub(oldest) >= job.MaxAge
	}
	if !ready(pending) {
		return res, nil
	}
	f := &file{w: w, crawlID: job.CrawlID}
	defer f.discard()
	var after int64
	for {
		caps, err := w.Store.Unarchived(ctx, job.CrawlID, after, batch)
		if err != nil {
			return res, err
		}
		if len(caps) == 0 {
			break
		}
		for _, c := range caps {
			if err := f.add(ctx, c); err != nil {
				return res, err
			}
			after = c.ID
			if f.wr.Size() >= job.MaxBytes {
				if err := f.finish(ctx, &res); err != nil {
					return res, err
				}
			}
		}
		if w.Hooks.Progress != nil {
			w.Hooks.Progress(after)
		}
	}
	if f.wr != nil && ready(f.wr.Size()) {
		if err := f.finish(ctx, &res); err != nil {
			return res, err
		}
	}
	return res, nil
}

func (w *Writer) now() time.Time {
	if w.Now != nil {
		return w.Now()
	}
	return time.Now()
}

// writeRenders writes the crawl's rendered DOMs not yet archived, one file a batch (named
// …-dom-…), listed with the crawl's WARC files: each DOM a conversion record referring to the
// response record of the capture it was rendered from, followed by what the browser loaded
// through the worker for it (request and response records). The index names those loads and
// not the DOMs: a replay tool looking a URL up must find its capture, not the DOM made from it.
func (w *Writer) writeRenders(ctx context.Context, crawlID string, res *Result) error {
	for {
		rs, err := w.Store.UnarchivedRenders(ctx, crawlID, batch)
		if err != nil || len(rs) == 0 {
			return err
		}
		f := &file{w: w, crawlID: crawlID}
		if err := f.addRenders(ctx, rs); err != nil {
			f.discard()
			return err
		}
		name := f.name
		if err := f.finish(ctx, res); err != nil {
			f.discard()
			return err
		}
		if err := w.Store.RendersArchived(ctx, name, rs); err != nil {
			return err
		}
	}
}
