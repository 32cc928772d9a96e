package activities

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/trawlerdev/trawler/internal/admit"
	"github.com/trawlerdev/trawler/internal/blob"
	"github.com/trawlerdev/trawler/internal/metrics"
	"github.com/trawlerdev/trawler/internal/segment"
	"github.com/trawlerdev/trawler/internal/store"
	"github.com/trawlerdev/trawler/internal/warc"
)

// Archiver runs on the process task queue: it writes a crawl's captures into WARC 1.1 files
// in the bucket (warc/<crawl>/…warc.gz, each with a .cdxj index beside it). Captures are
// read back from Postgres and the body store in fetch order, so a crash loses nothing: the
// next run rewrites the unfinished file under the same name with the same record IDs.
type Archiver struct {
	Store    *store.Store
	Blob     *blob.Store
	Bodies   *segment.Reader // reads bodies by reference (nil: each its own object)
	Crawls   *admit.Crawls
	Software string // warcinfo's software field
	TempDir  string // where files are assembled before upload ("" = the OS default)
}

// ArchiveInput asks for a crawl's WARC output to be brought up to date. Unless Final, a file
// is only written once it is full (warc.maxBytes) or its oldest capture has waited warc.maxAge.
type ArchiveInput struct {
	CrawlID string `json:"crawlId"`
	Final   bool   `json:"final,omitempty"`
}

// ArchiveResult says what was written.
type ArchiveResult struct {
	Files   int   `json:"files"`
	Records int   `json:"records"`
	Bytes   int64 `json:"bytes"`
	Busy    bool  `json:"busy,omitempty"` // another archiver holds the crawl
}

// archiveBatch is how many captures are read per query.
const archiveBatch = 200

// WriteWARC writes the crawl's unarchived captures.
func (a *Archiver) WriteWARC(ctx context.Context, in ArchiveInput) (ArchiveResult, error) {
	var res ArchiveResult
	ci, err := a.Crawls.Get(ctx, in.CrawlID)
	if err != nil || ci.Spec.WARC.Off {
		return res, err
	}
	release, ok, err := a.Store.LockArchive(ctx, in.CrawlID)
	if err != nil || !ok {
		res.Busy = err == nil
		return res, err
	}
	defer release()
	// Rendered DOMs (spec.render) go out first, in files of their own: each a conversion
	// record referring to the response it was rendered from, which may sit in an earlier file.
	if err := a.writeRenders(ctx, in.CrawlID, &res); err != nil {
		return res, err
	}
	oldest, pending, err := a.Store.OldestUnarchived(ctx, in.CrawlID)
	if err != nil || oldest.IsZero() {
		return res, err
	}
	ready := func(size int64) bool {
		return in.Final || size >= ci.Spec.WARC.MaxBytes || time.Since(oldest) >= ci.Spec.WARC.MaxAge.D()
	}
	if !ready(pending) {
		return res, nil
	}
	f := &warcFile{a: a, crawlID: in.CrawlID}
	defer f.discard()
	var after int64
	for {
		caps, err := a.Store.Unarchived(ctx, in.CrawlID, after, archiveBatch)
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
			if f.w.Size() >= ci.Spec.WARC.MaxBytes {
				if err := f.finish(ctx, &res); err != nil {
					return res, err
				}
			}
		}
		activity.RecordHeartbeat(ctx, after)
	}
	if f.w != nil && ready(f.w.Size()) {
		if err := f.finish(ctx, &res); err != nil {
			return res, err
		}
	}
	return res, nil
}

// warcFile is the WARC file being assembled and its CDXJ lines.
type warcFile struct {
	a       *Archiver
	crawlID string
	name    string
	w       *warc.Writer
	cdx     []string
	placed  []store.Placed
	first   int64
	last    int64
}

// open starts the file, named for its first record's time and fetch ID (kind "" for captures,
// "dom-" for rendered DOMs), unless it is started.
func (f *warcFile) open(kind string, at time.Time, first int64) error {
	if f.w != nil {
		return nil
	}
	f.name = fmt.Sprintf("warc/%s/%s-%s-%s%012d.warc.gz", f.crawlID, f.crawlID, warc.Timestamp14(at), kind, first)
	w, err := warc.Create(f.a.TempDir, f.name[strings.LastIndex(f.name, "/")+1:], f.a.Software, time.Now())
	if err != nil {
		return err
	}
	f.w, f.first = w, first
	return nil
}

func (f *warcFile) add(ctx context.Context, c store.Capture) error {
	if err := f.open("", c.FetchedAt, c.ID); err != nil {
		return err
	}
	respID := warc.RecordID(c.FetchKey + "/response")
	if c.RequestHead != "" {
		if _, _, err := f.w.Add(warc.Record{Type: warc.TypeRequest, ID: warc.RecordID(c.FetchKey + "/request"), Date: c.FetchedAt,
			TargetURI: c.URL, ContentType: "application/http;msgtype=request", ConcurrentTo: respID, Block: []byte(c.RequestHead)}); err != nil {
			return err
		}
	}
	rec, err := f.a.captureRecord(ctx, c, respID)
	if err != nil {
		return err
	}
	off, n, err := f.w.Add(rec)
	if err != nil {
		return err
	}
	f.placed = append(f.placed, store.Placed{ID: c.ID, Offset: off, Length: n})
	f.cdx = append(f.cdx, warc.CDXEntry{URL: c.URL, Time: c.FetchedAt, Mime: mimeOf(c.ContentType), Status: c.Status,
		Digest: rec.PayloadDigest, Filename: f.name, Offset: off, Length: n, Revisit: rec.Type == warc.TypeRevisit}.Line())
	f.last = c.ID
	return nil
}

// captureRecord builds the response record of a capture, or a revisit record when the server
// said 304 or the payload repeats an earlier capture's (the body is then stored once).
func (a *Archiver) captureRecord(ctx context.Context, c store.Capture, id string) (warc.Record, error) {
	head := c.ResponseHead
	if head == "" { // recorded before heads were kept: the status line and type are what we know
		head = fmt.Sprintf("HTTP/1.1 %d %s\r\nContent-Type: %s\r\n\r\n", c.Status, http.StatusText(c.Status), c.ContentType)
	}
	rec := warc.Record{ID: id, Date: c.FetchedAt, TargetURI: c.URL, ContentType: "application/http;msgtype=response"}
	if c.RefersToID > 0 && (c.Status == http.StatusNotModified || c.BodyKey != "") {
		rec.Type, rec.Profile = warc.TypeRevisit, warc.ProfileIdenticalDigest
		if c.Status == http.StatusNotModified {
			rec.Profile = warc.ProfileNotModified
		}
		rec.RefersToURI, rec.RefersToDate = c.RefersToURL, c.RefersToDate
		if len(c.RefersToHash) > 0 {
			rec.PayloadDigest = warc.DigestOf(c.RefersToHash)
		}
		rec.Block = warc.HTTPResponseBlock(head, nil, false)
		return rec, nil
	}
	rec.Type = warc.TypeResponse
	var body []byte
	if c.BodyKey != "" {
		var err error
		if body, err = a.body(ctx, c.BodyKey); err != nil {
			return rec, err
		}
		rec.PayloadDigest = warc.DigestOf(c.ContentHash)
	}
	if c.Truncated {
		rec.Truncated = "length"
	}
	rec.Block = warc.HTTPResponseBlock(head, body, true)
	return rec, nil
}

// finish uploads the file and its index and records where every capture went.
func (f *warcFile) finish(ctx context.Context, res *ArchiveResult) error {
	if err := f.w.Close(); err != nil {
		return err
	}
	if err := f.a.Blob.PutFile(ctx, f.name, f.w.Path, "application/warc"); err != nil {
		return err
	}
	warc.SortLines(f.cdx)
	cdxKey := strings.TrimSuffix(f.name, ".warc.gz") + ".cdxj"
	if err := f.a.Blob.Put(ctx, cdxKey, []byte(strings.Join(f.cdx, "\n")+"\n"), "text/plain"); err != nil {
		return err
	}
	if err := f.a.Store.SaveWARCFile(ctx, store.WARCFile{CrawlID: f.crawlID, Name: f.name, CDXKey: cdxKey,
		Records: f.w.Records(), Bytes: f.w.Size(), FirstID: f.first, LastID: f.last, Placed: f.placed}); err != nil {
		return err
	}
	count(ctx, metrics.WARCRecords, int64(f.w.Records()))
	count(ctx, metrics.WARCBytes, f.w.Size())
	res.Files++
	res.Records += f.w.Records()
	res.Bytes += f.w.Size()
	activity.GetLogger(ctx).Info("wrote WARC file", "crawl", f.crawlID, "file", f.name, "records", f.w.Records(), "bytes", f.w.Size())
	_ = os.Remove(f.w.Path)
	f.w, f.cdx, f.placed = nil, nil, nil
	return nil
}

func (f *warcFile) discard() {
	if f.w != nil {
		f.w.Discard()
		f.w = nil
	}
}

// mimeOf is a Content-Type without its parameters.
func mimeOf(ct string) string {
	m, _, _ := strings.Cut(ct, ";")
	return strings.ToLower(strings.TrimSpace(m))
}

// body reads a stored body (or DOM) by reference.
func (a *Archiver) body(ctx context.Context, key string) ([]byte, error) {
	if a.Bodies != nil {
		return a.Bodies.Get(ctx, key, 1<<31)
	}
	return a.Blob.GetBody(ctx, key, 1<<31)
}

// writeRenders writes the crawl's rendered DOMs not yet archived, one file a batch (named
// …-dom-…), listed with the crawl's WARC files: each DOM a conversion record referring to the
// response record of the capture it was rendered from. The files index nothing (their CDXJ
// is empty): a replay tool looking a URL up must find its capture, not the DOM made from it.
func (a *Archiver) writeRenders(ctx context.Context, crawlID string, res *ArchiveResult) error {
	for {
		rs, err := a.Store.UnarchivedRenders(ctx, crawlID, archiveBatch)
		if err != nil || len(rs) == 0 {
			return err
		}
		f := &warcFile{a: a, crawlID: crawlID}
		if err := f.addRenders(ctx, rs); err != nil {
			f.discard()
			return err
		}
		name := f.name
		if err := f.finish(ctx, res); err != nil {
			f.discard()
			return err
		}
		if err := a.Store.RendersArchived(ctx, name, rs); err != nil {
			return err
		}
	}
}

// addRenders adds rendered DOMs as conversion records.
func (f *warcFile) addRenders(ctx context.Context, rs []store.RenderCapture) error {
	for _, r := range rs {
		if err := f.open("dom-", r.RenderedAt, r.FetchID); err != nil {
			return err
		}
		dom, err := f.a.body(ctx, r.DOMKey)
		if err != nil {
			return err
		}
		if _, _, err := f.w.Add(warc.Record{Type: warc.TypeConversion, ID: warc.RecordID(r.FetchKey + "/render"), Date: r.RenderedAt,
			TargetURI: r.URL, ContentType: "text/html; charset=utf-8", Block: dom,
			Extra: [][2]string{{"WARC-Refers-To", "<" + warc.RecordID(r.FetchKey+"/response") + ">"}}}); err != nil {
			return err
		}
		f.last = r.FetchID
	}
	return nil
}
