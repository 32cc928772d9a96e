// Package export writes a crawl's stored pages as records for the next tool — JSON Lines, CSV
// or Parquet — one record per stored page: its URLs, status, time, type, title, language, main
// text, out-links, digest, duplicate, and where its WARC record is. It reads the store a page
// of rows at a time and writes as it reads, so memory stays flat whatever the crawl's size.
package export

import (
	"cmp"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/segment"
	"github.com/trawlerdev/trawler/internal/store"
	"github.com/trawlerdev/trawler/internal/warc"
)

// Record is one exported page. The json names are the field names --fields takes, and the
// CSV header; Parquet columns take the parquet names.
type Record struct {
	// Key is the same for every record of one document with one payload (Key): a consumer
	// of deliveries, which come at least once, dedupes on it.
	Key         string    `json:"key" parquet:"key"`
	URL         string    `json:"url" parquet:"url"`
	FinalURL    string    `json:"finalUrl" parquet:"final_url"`
	Status      int32     `json:"status" parquet:"status"`
	FetchedAt   time.Time `json:"fetchedAt" parquet:"fetched_at,timestamp(millisecond)"`
	ContentType string    `json:"contentType" parquet:"content_type"`
	Title       string    `json:"title" parquet:"title"`
	Lang        string    `json:"lang" parquet:"lang"`
	Text        string    `json:"text" parquet:"text"`
	Links       []string  `json:"links" parquet:"links,list"`
	Digest      string    `json:"digest" parquet:"digest"`
	DuplicateOf string    `json:"duplicateOf" parquet:"duplicate_of"`
	WARCFile    string    `json:"warcFile" parquet:"warc_file"`
	WARCOffset  int64     `json:"warcOffset" parquet:"warc_offset"`
	WARCLength  int64     `json:"warcLength" parquet:"warc_length"`
	// Extract is what the crawl's extraction rules found (JSON, nested as stored in JSON
	// Lines); a crawl with rules exports each of their fields as a column of its own too
	// (extract.<rule>.<field>).
	Extract string `json:"extract" parquet:"extract"`
}

// Fields are every field's name, in record order.
var Fields = fieldNames()

// Formats are the formats Write takes.
var Formats = []string{"jsonl", "csv", "parquet"}

// Options choose what an export holds.
type Options struct {
	Crawl  string
	Format string    // jsonl, csv or parquet
	Fields []string  // nil: all
	Omit   []string  // with Fields nil: all but these
	Since  time.Time // pages fetched at or after (zero: all)
	// CSVSafe prefixes a CSV cell that a spreadsheet would run as a formula (one beginning
	// with = + - @, a tab or a carriage return) with a single quote: a page's title is the
	// site's to write.
	CSVSafe bool
	// Progress is told how many records are written, now and then (nil: not told).
	Progress func(done int64)
}

// Source is where pages come from: the store's rows and the text segments.
type Source struct {
	Store *store.Store
	Texts *segment.Reader
}

// pageRows is how many stored pages one query reads.
const pageRows = 500

// maxText bounds one page's text as read back (processing keeps at most 1 MiB).
const maxText = 4 << 20

// Check validates the options before anything is read.
func (o Options) Check() error {
	if o.Crawl == "" {
		return errors.New("export: name the crawl")
	}
	if !slices.Contains(Formats, o.Format) {
		return fmt.Errorf("export: format %q: want one of %s", o.Format, strings.Join(Formats, ", "))
	}
	for i, f := range o.Fields {
		if !slices.Contains(Fields, f) && !strings.HasPrefix(f, "extract.") && !strings.HasPrefix(f, "extract_") { // (those checked against the crawl's rules)
			return fmt.Errorf("export: field %q: want some of %s", f, strings.Join(Fields, ","))
		}
		if slices.Contains(o.Fields[:i], f) {
			return fmt.Errorf("export: field %q named twice", f)
		}
	}
	return nil
}

// Write exports o.Crawl's stored pages to w and returns how many records it wrote.
func (s *Source) Write(ctx context.Context, w io.Writer, o Options) (int64, error) {
	if err := o.Check(); err != nil {
		return 0, err
	}
	var spec crawl.Spec
	if err := s.Store.Crawls().CrawlSpec(ctx, o.Crawl, &spec); err != nil {
		return 0, err
	}
	rw, err := s.NewRecordWriter(w, o, spec.Extract)
	if err != nil {
		return 0, err
	}
	var after []byte
	var n int64
	for {
		pages, err := s.Store.Inspect().StoredPages(ctx, o.Crawl, after, o.Since, pageRows)
		if err != nil {
			return n, err
		}
		for _, p := range pages {
			if err := rw.Write(ctx, p); err != nil {
				return n, err
			}
			n++
		}
		if o.Progress != nil {
			o.Progress(n)
		}
		if len(pages) < pageRows {
			break
		}
		after = pages[len(pages)-1].Hash
	}
	if err := rw.Close(); err != nil {
		return n, fmt.Errorf("export: finish: %w", err)
	}
	return n, nil
}

// RecordWriter writes stored pages as records of one crawl in one format: the one place a
// stored page becomes a record, for exports and deliveries alike.
type RecordWriter struct {
	crawl    string
	texts    *segment.Reader
	enc      encoder
	cols     []column
	wantText bool
	size     int64
}

// NewRecordWriter writes o.Crawl's records to w in o.Format with o.Fields (all when none), a
// crawl with extraction rules adding what they found.
func (s *Source) NewRecordWriter(w io.Writer, o Options, rules []crawl.ExtractRule) (*RecordWriter, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	fields, cols, err := o.pick(extractColumns(rules))
	if err != nil {
		return nil, err
	}
	enc, err := newEncoder(o.Format, w, fields, cols, o.CSVSafe)
	if err != nil {
		return nil, err
	}
	return &RecordWriter{crawl: o.Crawl, texts: s.Texts, enc: enc, cols: cols, wantText: slices.Contains(fields, "text")}, nil
}

// Write writes p's record, its text read from the text segments when the fields take it.
func (rw *RecordWriter) Write(ctx context.Context, p store.StoredPage) error {
	r := Record{Key: Key(rw.crawl, p.Hash, p.ContentHash), URL: p.URL, FinalURL: p.FinalURL, Status: int32(p.Status),
		FetchedAt: p.FetchedAt.UTC(), ContentType: p.ContentType, Title: p.Title, Lang: p.Lang, Links: p.Links,
		DuplicateOf: p.DuplicateOf, WARCFile: p.WARCFile, WARCOffset: p.WARCOffset, WARCLength: p.WARCBytes, Extract: p.Extract}
	if len(p.ContentHash) > 0 {
		r.Digest = warc.DigestOf(p.ContentHash)
	}
	if rw.wantText && p.TextKey != "" {
		text, err := rw.texts.Get(ctx, p.TextKey, maxText)
		if err != nil {
			return fmt.Errorf("export: text of %s: %w", p.URL, err)
		}
		r.Text = string(text)
	}
	var x extracted
	if len(rw.cols) > 0 {
		x = parseExtracted(p.Extract)
	}
	if err := rw.enc.encode(&r, x); err != nil {
		return fmt.Errorf("export: write %s: %w", p.URL, err)
	}
	rw.size += int64(len(r.Text) + len(r.URL)*(2+len(r.Links)) + len(r.Extract) + len(r.Title) + 200)
	return nil
}

// Size is about how many bytes the records written so far hold (before compression): what a
// caller bounds a batch by.
func (rw *RecordWriter) Size() int64 { return rw.size }

// Close ends the records (a Parquet file's footer; flushes buffered lines).
func (rw *RecordWriter) Close() error { return rw.enc.close() }

// Key is a record's idempotency key: the document's ID (its crawl and URL hash) and the digest
// of its payload. A record sent again carries the same key; a page that changed, a new one.
func Key(crawlID string, urlHash, contentHash []byte) string {
	return crawlID + "/" + hex.EncodeToString(urlHash) + "/" + warc.DigestOf(contentHash)
}

// pick splits the chosen fields into the record's and the extracted columns of the crawl's
// rules (cols). None chosen: every field of the record; a crawl with rules adds what they
// found — nested under extract in JSON Lines, a column for each field in CSV and Parquet.
func (o Options) pick(cols []column) ([]string, []column, error) {
	if len(o.Fields) == 0 {
		fields := slices.DeleteFunc(slices.Clone(Fields), func(f string) bool { return f == "extract" || slices.Contains(o.Omit, f) })
		switch {
		case len(cols) == 0:
			return fields, nil, nil
		case o.Format == "jsonl":
			return append(fields, "extract"), nil, nil
		default:
			return fields, cols, nil
		}
	}
	var fields []string
	var picked []column
	for _, f := range o.Fields {
		if slices.Contains(Fields, f) {
			fields = append(fields, f)
			continue
		}
		i := slices.IndexFunc(cols, func(c column) bool { return c.name == f || c.parquet == f })
		if i < 0 {
			var names []string
			for _, c := range cols {
				names = append(names, c.name)
			}
			return nil, nil, fmt.Errorf("export: field %q: the crawl's extraction rules make %s", f, cmp.Or(strings.Join(names, ","), "none"))
		}
		picked = append(picked, cols[i])
	}
	return fields, picked, nil
}
