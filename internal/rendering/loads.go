package rendering

import (
	"bytes"
	"fmt"
	"net/http"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/fetch"
	"github.com/trawlerdev/trawler/internal/store"
	"github.com/trawlerdev/trawler/internal/warc"
)

// maxMimeBytes caps the media type a server sent, as a load's index keeps it.
const maxMimeBytes = 200

// loads records what the browser was given through the worker while it rendered one page —
// each same-host subresource fetched for it — as WARC request and response records, each its
// own gzip member, so the archiver copies them into the WARC file beside the DOM: a replay
// then has what the page's scripts loaded, which no static reading of the page finds. They
// are bounded as the page's loads are (render MaxBytes and MaxRequests). Policy calls that
// fetch are serial (pagePolicy.fetchMu), so loads needs no lock of its own.
type loads struct {
	fetchKey string // the rendered capture's: record IDs derive from it
	recs     bytes.Buffer
	index    []store.RenderLoad
}

// add records one answer the browser was given for rawURL.
func (l *loads) add(rawURL string, resp *fetch.Response) error {
	n := len(l.index)
	respID := warc.RecordID(fmt.Sprintf("%s/render/%d/response", l.fetchKey, n))
	if resp.RequestHead != "" {
		if _, err := (warc.Record{Type: warc.TypeRequest, ID: warc.RecordID(fmt.Sprintf("%s/render/%d/request", l.fetchKey, n)),
			Date: resp.Started, TargetURI: rawURL, ContentType: "application/http;msgtype=request", ConcurrentTo: respID,
			Block: []byte(resp.RequestHead)}).Marshal(&l.recs); err != nil {
			return err
		}
	}
	head := resp.ResponseHead
	if head == "" {
		head = fmt.Sprintf("HTTP/1.1 %d %s\r\nContent-Type: %s\r\n\r\n", resp.Status, http.StatusText(resp.Status), resp.ContentType)
	}
	rec := warc.Record{Type: warc.TypeResponse, ID: respID, Date: resp.Started, TargetURI: rawURL,
		ContentType: "application/http;msgtype=response", PayloadDigest: warc.Digest(resp.Body),
		Block: warc.HTTPResponseBlock(head, resp.Body, true)}
	if resp.Truncated {
		rec.Truncated = "length"
	}
	off := int64(l.recs.Len())
	length, err := rec.Marshal(&l.recs)
	if err != nil {
		return err
	}
	l.index = append(l.index, store.RenderLoad{URL: rawURL, At: resp.Started, Status: resp.Status, Mime: crawl.Clip(warc.MIME(resp.ContentType), maxMimeBytes),
		Digest: rec.PayloadDigest, Offset: off, Length: length, Request: resp.RequestHead != ""})
	return nil
}
