// Package wacz packages a crawl's WARC files as a WACZ 1.1.1 file (Webrecorder's Web Archive
// Collection Zipped, what ReplayWeb.page and Browsertrix users open): the WARC files under
// archive/ stored uncompressed in the zip (they are gzip already, and a reader seeks into
// them), one sorted CDXJ index naming them, pages/pages.jsonl listing the crawl's HTML pages,
// and datapackage.json with each file's size and SHA-256, itself digested in
// datapackage-digest.json.
package wacz

import (
	"archive/zip"
	"bufio"
	"container/heap"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"path"
	"strings"
	"time"

	"github.com/trawlerdev/trawler/internal/blob"
	"github.com/trawlerdev/trawler/internal/store"
	"github.com/trawlerdev/trawler/internal/warc"
)

// Version is the WACZ version written.
const Version = "1.1.1"

// Packer writes WACZ files from the store's WARC files.
type Packer struct {
	Store    *store.Store
	Blob     *blob.Store
	Software string
	// Borrowed carries in the package the bodies the crawl's revisits borrow from other crawls
	// (spec.dedupAgainst), as response records in a WARC file of its own, so the package
	// replays alone, also once those crawls are deleted. Body reads them.
	Borrowed bool
	Body     func(ctx context.Context, key string) ([]byte, error)
}

// Resource is one file of the package, as datapackage.json lists it.
type Resource struct {
	Name  string `json:"name"`
	Path  string `json:"path"`
	Hash  string `json:"hash"`
	Bytes int64  `json:"bytes"`
}

// Package is what datapackage.json says of the WACZ.
type Package struct {
	Profile      string     `json:"profile"`
	WACZVersion  string     `json:"wacz_version"`
	Title        string     `json:"title"`
	Description  string     `json:"description,omitempty"`
	Created      string     `json:"created"`
	Modified     string     `json:"modified"`
	Software     string     `json:"software"`
	MainPageURL  string     `json:"mainPageUrl,omitempty"`
	MainPageDate string     `json:"mainPageDate,omitempty"`
	Resources    []Resource `json:"resources"`
	Pages        int        `json:"-"`
	Borrowed     int        `json:"-"` // bodies carried for revisits of other crawls
}

// ErrNoWARC is returned for a crawl without WARC files.
var ErrNoWARC = errors.New("the crawl has no WARC files (yet)")

// Write packages crawlID's WARC files into w as a WACZ.
func (p *Packer) Write(ctx context.Context, w io.Writer, crawlID string, now time.Time) (*Package, error) {
	files, err := p.Store.Archive().WARCFiles(ctx, crawlID)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("wacz: crawl %s: %w", crawlID, ErrNoWARC)
	}
	pkg := &Package{Profile: "data-package", WACZVersion: Version, Title: "Trawler crawl " + crawlID,
		Created: now.UTC().Format(time.RFC3339), Modified: now.UTC().Format(time.RFC3339), Software: p.Software}
	zw := zip.NewWriter(w)
	add := func(name string, method uint16, write func(io.Writer) error) error {
		fw, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: method, Modified: now})
		if err != nil {
			return err
		}
		cw := &counted{h: sha256.New()}
		if err := write(io.MultiWriter(fw, cw)); err != nil {
			return fmt.Errorf("wacz: %s: %w", name, err)
		}
		pkg.Resources = append(pkg.Resources, Resource{Name: path.Base(name), Path: name, Hash: "sha256:" + hex.EncodeToString(cw.h.Sum(nil)), Bytes: cw.n})
		return nil
	}
	packaged := map[string]bool{}
	for _, f := range files {
		packaged[f.Name] = true
		// Each WARC file goes in as it is stored: gzip members a reader seeks to by offset, so
		// the zip must not compress them again (STORE).
		if err := add("archive/"+path.Base(f.Name), zip.Store, func(dst io.Writer) error {
			r, err := p.Blob.Open(ctx, f.Name)
			if err != nil {
				return err
			}
			defer r.Close()
			_, err = io.Copy(dst, r)
			return err
		}); err != nil {
			return nil, err
		}
	}
	var borrowed []string
	if p.Borrowed {
		name := BorrowedName(crawlID)
		if err := add("archive/"+name, zip.Store, func(dst io.Writer) error {
			var err error
			borrowed, err = p.writeBorrowed(ctx, dst, crawlID, now)
			return err
		}); err != nil {
			return nil, err
		}
		pkg.Borrowed = len(borrowed)
	}
	if err := add("indexes/index.cdxj", zip.Deflate, func(dst io.Writer) error {
		return p.mergeIndexes(ctx, dst, files, linesSource(BorrowedName(crawlID), borrowed))
	}); err != nil {
		return nil, err
	}
	if err := add("pages/pages.jsonl", zip.Deflate, func(dst io.Writer) error { return p.writePages(ctx, dst, crawlID, packaged, pkg) }); err != nil {
		return nil, err
	}
	manifest, err := json.MarshalIndent(pkg, "", "  ")
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(manifest)
	digest, _ := json.MarshalIndent(map[string]string{"path": "datapackage.json", "hash": "sha256:" + hex.EncodeToString(sum[:])}, "", "  ")
	for _, f := range []struct {
		name string
		data []byte
	}{{"datapackage.json", manifest}, {"datapackage-digest.json", digest}} {
		fw, err := zw.CreateHeader(&zip.FileHeader{Name: f.name, Method: zip.Deflate, Modified: now})
		if err != nil {
			return nil, err
		}
		if _, err := fw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("wacz: finish: %w", err)
	}
	return pkg, nil
}

// mergeIndexes writes the WARC files' CDXJ indexes as one sorted index, each line naming its
// file as the package holds it (its base name under archive/, where a replayer looks). Each
// index is sorted already: a streamed merge, so a crawl of millions of records needs no more
// memory than a line per file.
func (p *Packer) mergeIndexes(ctx context.Context, w io.Writer, files []store.WARCFile, more ...*indexSource) error {
	h := &lineHeap{}
	for _, src := range more {
		if ok, err := src.next(); err != nil {
			return err
		} else if ok {
			heap.Push(h, src)
		}
	}
	for _, f := range files {
		if f.CDXKey == "" {
			continue
		}
		r, err := p.Blob.Open(ctx, f.CDXKey)
		if err != nil {
			return fmt.Errorf("index of %s: %w", f.Name, err)
		}
		defer r.Close()
		src := newIndexSource(r, path.Base(f.Name), f.Name)
		if ok, err := src.next(); err != nil {
			return err
		} else if ok {
			heap.Push(h, src)
		}
	}
	bw := bufio.NewWriter(w)
	for h.Len() > 0 {
		src := (*h)[0]
		if _, err := bw.WriteString(src.line + "\n"); err != nil {
			return err
		}
		ok, err := src.next()
		if err != nil {
			return err
		}
		if ok {
			heap.Fix(h, 0)
		} else {
			heap.Pop(h)
		}
	}
	return bw.Flush()
}

// indexSource is one WARC file's index being merged: its current line, renamed.
type indexSource struct {
	sc         *bufio.Scanner
	file, name string
	line       string
}

func newIndexSource(r io.Reader, file, name string) *indexSource {
	src := &indexSource{sc: bufio.NewScanner(r), file: file, name: name}
	src.sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	return src
}

// next reads the source's next line, naming its file as the package holds it.
func (s *indexSource) next() (bool, error) {
	for s.sc.Scan() {
		line := strings.TrimSpace(s.sc.Text())
		if line == "" {
			continue
		}
		key, rest, ok1 := strings.Cut(line, " ")
		ts, js, ok2 := strings.Cut(rest, " ")
		if !ok1 || !ok2 {
			return false, fmt.Errorf("index of %s: a line is not CDXJ: %.100q", s.name, line)
		}
		fields := map[string]json.RawMessage{}
		if err := json.Unmarshal([]byte(js), &fields); err != nil {
			return false, fmt.Errorf("index of %s: %w", s.name, err)
		}
		fields["filename"], _ = json.Marshal(s.file)
		b, err := json.Marshal(fields)
		if err != nil {
			return false, err
		}
		s.line = key + " " + ts + " " + string(b)
		return true, nil
	}
	if err := s.sc.Err(); err != nil {
		return false, fmt.Errorf("index of %s: %w", s.name, err)
	}
	return false, nil
}

// lineHeap orders the sources by their current line.
type lineHeap []*indexSource

func (h lineHeap) Len() int           { return len(h) }
func (h lineHeap) Less(i, j int) bool { return h[i].line < h[j].line }
func (h lineHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *lineHeap) Push(x any)        { *h = append(*h, x.(*indexSource)) }
func (h *lineHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// writePages lists the crawl's HTML pages archived in the packaged files, the first line the
// list's own header, and picks the main page: the first seed's, else the first page.
func (p *Packer) writePages(ctx context.Context, w io.Writer, crawlID string, packaged map[string]bool, pkg *Package) error {
	enc := json.NewEncoder(w)
	if err := enc.Encode(map[string]string{"format": "json-pages-1.0", "id": "pages", "title": "All Pages"}); err != nil {
		return err
	}
	seeds, err := p.Store.Inspect().SeedURLs(ctx, crawlID)
	if err != nil {
		return err
	}
	var after []byte
	for {
		pages, err := p.Store.Inspect().StoredPages(ctx, crawlID, after, time.Time{}, 500)
		if err != nil {
			return err
		}
		for _, pg := range pages {
			if !packaged[pg.WARCFile] || !warc.IsHTML(pg.ContentType) { // archived since the package's files were listed: not in it
				continue
			}
			ts := pg.FetchedAt.UTC().Format(time.RFC3339)
			if err := enc.Encode(struct {
				ID    string `json:"id"`
				URL   string `json:"url"`
				TS    string `json:"ts"`
				Title string `json:"title,omitempty"`
			}{hex.EncodeToString(pg.Hash), pg.URL, ts, pg.Title}); err != nil {
				return err
			}
			pkg.Pages++
			if pkg.MainPageURL == "" || (seeds[pg.URL] && !seeds[pkg.MainPageURL]) {
				pkg.MainPageURL, pkg.MainPageDate = pg.URL, ts
			}
		}
		if len(pages) < 500 {
			return nil
		}
		after = pages[len(pages)-1].Hash
	}
}

// counted hashes and counts what passes.
type counted struct {
	h hash.Hash
	n int64
}

func (c *counted) Write(b []byte) (int, error) {
	c.n += int64(len(b))
	return c.h.Write(b)
}
