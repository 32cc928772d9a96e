package archiving

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/trawlerdev/trawler/internal/gz"
	"github.com/trawlerdev/trawler/internal/store"
	"github.com/trawlerdev/trawler/internal/warc"
)

// file is the WARC file being assembled and its CDXJ lines.
type file struct {
	w       *Writer
	crawlID string
	name    string
	wr      *warc.Writer
	cdx     []string
	placed  []store.Placed
	first   int64
	last    int64
}

// open starts the file, named for its first record's time and fetch ID (kind "" for captures,
// "dom-" for rendered DOMs), unless it is started.
func (f *file) open(kind string, at time.Time, first int64) error {
	if f.wr != nil {
		return nil
	}
	f.name = fmt.Sprintf("warc/%s/%s-%s-%s%012d.warc.gz", f.crawlID, f.crawlID, warc.Timestamp14(at), kind, first)
	wr, err := warc.Create(f.w.TempDir, f.name[strings.LastIndex(f.name, "/")+1:], f.w.Software, f.w.now())
	if err != nil {
		return err
	}
	f.wr, f.first = wr, first
	return nil
}

func (f *file) add(ctx context.Context, c store.Capture) error {
	if err := f.open("", c.FetchedAt, c.ID); err != nil {
		return err
	}
	respID := warc.RecordID(c.FetchKey + "/response")
	if c.RequestHead != "" {
		if _, _, err := f.wr.Add(warc.Record{Type: warc.TypeRequest, ID: warc.RecordID(c.FetchKey + "/request"), Date: c.FetchedAt,
			TargetURI: c.URL, ContentType: "application/http;msgtype=request", ConcurrentTo: respID, Block: []byte(c.RequestHead)}); err != nil {
			return err
		}
	}
	rec, err := f.w.captureRecord(ctx, c, respID)
	if err != nil {
		return err
	}
	off, n, err := f.wr.Add(rec)
	if err != nil {
		return err
	}
	f.placed = append(f.placed, store.Placed{ID: c.ID, Offset: off, Length: n})
	f.cdx = append(f.cdx, warc.CDXEntry{URL: c.URL, Time: c.FetchedAt, Mime: warc.MIME(c.ContentType), Status: c.Status,
		Digest: rec.PayloadDigest, Filename: f.name, Offset: off, Length: n, Revisit: rec.Type == warc.TypeRevisit}.Line())
	f.last = c.ID
	return nil
}

// captureRecord builds the response record of a capture, or a revisit record when the server
// said 304 or the payload repeats an earlier capture's (the body is then stored once).
func (w *Writer) captureRecord(ctx context.Context, c store.Capture, id string) (warc.Record, error) {
	head := c.ResponseHead
	if head == "" { // recorded before heads were kept: the status line and type are what we know
		head = fmt.Sprintf("HTTP/1.1 %d %s\r\nContent-Type: %s\r\n\r\n", c.Status, http.StatusText(c.Status), c.ContentType)
	}
	rec := warc.Record{ID: id, Date: c.FetchedAt, TargetURI: c.URL, ContentType: "application/http;msgtype=response"}
	if c.RefersToURL != "" && (c.Status == http.StatusNotModified || c.BodyKey != "") {
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
	if c.BodyKey != "" {
		var err error
		if rec.Payload, rec.Deflated, err = w.payload(ctx, c.BodyKey); err != nil {
			return rec, err
		}
		rec.PayloadDigest = warc.DigestOf(c.ContentHash)
	}
	if c.Truncated {
		rec.Truncated = "length"
	}
	rec.Block = warc.HTTPResponseHead(head, len(rec.Payload), true)
	return rec, nil
}

// payload reads a stored body or DOM by reference, with its compressed stream when it can be
// spliced into its record (Writer.Payload).
func (w *Writer) payload(ctx context.Context, key string) ([]byte, *gz.Deflated, error) {
	if w.Payload != nil {
		return w.Payload(ctx, key)
	}
	data, err := w.Body(ctx, key)
	return data, nil, err
}

// addRenders adds rendered DOMs as conversion records.
func (f *file) addRenders(ctx context.Context, rs []store.RenderCapture) error {
	for _, r := range rs {
		if err := f.open("dom-", r.RenderedAt, r.FetchID); err != nil {
			return err
		}
		dom, deflated, err := f.w.payload(ctx, r.DOMKey)
		if err != nil {
			return err
		}
		if _, _, err := f.wr.Add(warc.Record{Type: warc.TypeConversion, ID: warc.RecordID(r.FetchKey + "/render"), Date: r.RenderedAt,
			TargetURI: r.URL, ContentType: "text/html; charset=utf-8", Payload: dom, Deflated: deflated,
			Extra: [][2]string{{"WARC-Refers-To", "<" + warc.RecordID(r.FetchKey+"/response") + ">"}}}); err != nil {
			return err
		}
		if err := f.addLoads(ctx, r); err != nil {
			return err
		}
		f.last = r.FetchID
	}
	return nil
}

// addLoads copies what the browser loaded while it rendered r — request and response records
// the render stage wrote — into the file, and indexes each response: unlike the DOM, these are
// captures a replay looks up by URL.
func (f *file) addLoads(ctx context.Context, r store.RenderCapture) error {
	if r.LoadsKey == "" {
		return nil
	}
	recs, err := f.w.Body(ctx, r.LoadsKey)
	if err != nil {
		return err
	}
	records := 0
	for _, l := range r.Loads {
		records++
		if l.Request {
			records++
		}
	}
	base, err := f.wr.AddRaw(recs, records)
	if err != nil {
		return err
	}
	for _, l := range r.Loads {
		if l.Offset < 0 || l.Offset+l.Length > int64(len(recs)) {
			return fmt.Errorf("archiving: the loads of %s place a record outside them", r.URL)
		}
		f.cdx = append(f.cdx, warc.CDXEntry{URL: l.URL, Time: l.At, Mime: l.Mime, Status: l.Status, Digest: l.Digest,
			Filename: f.name, Offset: base + l.Offset, Length: l.Length}.Line())
	}
	return nil
}

// finish uploads the file and its index and records where every capture went.
func (f *file) finish(ctx context.Context, res *Result) error {
	if err := f.wr.Close(); err != nil {
		return err
	}
	if err := f.w.Blobs.PutFile(ctx, f.name, f.wr.Path, "application/warc"); err != nil {
		return err
	}
	warc.SortLines(f.cdx)
	cdxKey := strings.TrimSuffix(f.name, ".warc.gz") + ".cdxj"
	if err := f.w.Blobs.Put(ctx, cdxKey, []byte(strings.Join(f.cdx, "\n")+"\n"), "text/plain"); err != nil {
		return err
	}
	if err := f.w.Store.SaveWARCFile(ctx, store.WARCFile{CrawlID: f.crawlID, Name: f.name, CDXKey: cdxKey,
		Records: f.wr.Records(), Bytes: f.wr.Size(), FirstID: f.first, LastID: f.last, Placed: f.placed}); err != nil {
		return err
	}
	res.Files++
	res.Records += f.wr.Records()
	res.Bytes += f.wr.Size()
	if f.w.Hooks.Wrote != nil {
		f.w.Hooks.Wrote(f.name, f.wr.Records(), f.wr.Size())
	}
	_ = os.Remove(f.wr.Path)
	f.wr, f.cdx, f.placed = nil, nil, nil
	return nil
}

func (f *file) discard() {
	if f.wr != nil {
		f.wr.Discard()
		f.wr = nil
	}
}
