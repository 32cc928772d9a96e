package wacz

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/trawlerdev/trawler/internal/warc"
)

// borrowedPage is how many borrowed bodies are read from the store at a time.
const borrowedPage = 200

// BorrowedName is the package's WARC file that carries the bodies a crawl's revisits borrow
// from other crawls.
func BorrowedName(crawlID string) string { return crawlID + "-borrowed.warc.gz" }

// writeBorrowed writes, as one WARC file, a response record for every body crawlID's revisits
// borrow from another crawl: at the URL and date the revisits refer to, with the head this
// crawl got and the bytes from the store. A replayer resolves a revisit by looking up that
// URL and date, so the package replays without the other crawl's files. It returns the
// file's index lines, sorted.
func (p *Packer) writeBorrowed(ctx context.Context, w io.Writer, crawlID string, now time.Time) ([]string, error) {
	name := BorrowedName(crawlID)
	var off int64
	put := func(r warc.Record) (int64, error) {
		n, err := r.Marshal(w)
		at := off
		off += n
		return at, err
	}
	if _, err := put(warc.Info(name, p.Software, now)); err != nil {
		return nil, err
	}
	var lines []string
	var after []byte
	for {
		bodies, err := p.Store.Documents().BorrowedBodies(ctx, crawlID, after, borrowedPage)
		if err != nil {
			return nil, err
		}
		for _, b := range bodies {
			body, err := p.Body(ctx, b.BodyKey)
			if err != nil {
				return nil, fmt.Errorf("the body of %s that crawl %s stored: %w", b.URL, b.Owner, err)
			}
			head := b.ResponseHead
			if head == "" { // none of this crawl's answers kept a head for these bytes
				head = fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: %s\r\n\r\n", b.ContentType)
			}
			digest := warc.DigestOf(b.ContentHash)
			rec := warc.Record{Type: warc.TypeResponse, ID: warc.RecordID("borrowed/" + crawlID + "/" + hex.EncodeToString(b.ContentHash)),
				Date: b.FetchedAt, TargetURI: b.URL, ContentType: "application/http;msgtype=response", PayloadDigest: digest,
				Block: warc.HTTPResponseBlock(head, body, true)}
			at, err := put(rec)
			if err != nil {
				return nil, err
			}
			lines = append(lines, warc.CDXEntry{URL: b.URL, Time: b.FetchedAt, Mime: warc.MIME(b.ContentType), Status: http.StatusOK,
				Digest: digest, Filename: name, Offset: at, Length: off - at}.Line())
		}
		if len(bodies) < borrowedPage {
			break
		}
		after = bodies[len(bodies)-1].ContentHash
	}
	warc.SortLines(lines)
	return lines, nil
}

// linesSource is an index held in memory, as mergeIndexes reads one.
func linesSource(file string, lines []string) *indexSource {
	return newIndexSource(strings.NewReader(strings.Join(lines, "\n")), file, file)
}
