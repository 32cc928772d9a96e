package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/trawlerdev/trawler/internal/app"
	"github.com/trawlerdev/trawler/internal/config"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/segment"
	"github.com/trawlerdev/trawler/internal/store"
	"github.com/trawlerdev/trawler/internal/urlnorm"
	"github.com/trawlerdev/trawler/internal/wacz"
)

// runWARC lists a crawl's WARC files, or finds a URL's captures in them and extracts one.
func runWARC(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("trawler warc", flag.ContinueOnError)
	crawlName := fs.String("crawl", "", "the crawl (required)")
	rawURL := fs.String("url", "", "find this URL's captures (default: list the crawl's WARC files)")
	at := fs.String("at", "", "with --url: pick the capture nearest this time (RFC 3339); default the latest")
	out := fs.String("out", "", "with --url: write the picked capture's record (a one-record WARC.gz) to this file")
	waczOut := fs.String("wacz", "", "package the crawl's WARC files as a WACZ 1.1.1 file (for ReplayWeb.page) at this path")
	borrowed := fs.String("borrowed", "auto", "with --wacz: carry the bodies the crawl's revisits borrow from crawls it deduplicated against: include, leave (the other crawl's package replays them), or auto (include when such a crawl is deleted)")
	cfg, err := config.Load(fs, args, os.Getenv)
	if err != nil {
		return err
	}
	if *crawlName == "" {
		return errors.New("warc: --crawl is required")
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["borrowed"] && *waczOut == "" {
		return errors.New("warc: --borrowed goes with --wacz")
	}
	switch *borrowed {
	case "auto", "include", "leave":
	default:
		return fmt.Errorf("warc: --borrowed %q: want include, leave or auto", *borrowed)
	}
	if *waczOut != "" && *rawURL != "" {
		return errors.New("warc: --wacz packages the whole crawl: leave out --url")
	}
	var when time.Time
	if *at != "" {
		if when, err = time.Parse(time.RFC3339, *at); err != nil {
			return fmt.Errorf("warc: --at %q: want RFC 3339, e.g. 2026-11-22T10:00:00Z", *at)
		}
	}
	op, err := open(ctx, "warc", cfg, *crawlName, 0)
	if err != nil {
		return err
	}
	defer op.Close()
	st := op.st
	if *waczOut != "" {
		return writeWACZ(ctx, cfg, st, *crawlName, *waczOut, *borrowed, stdout)
	}
	if *rawURL == "" {
		files, err := st.Archive().WARCFiles(ctx, *crawlName)
		if err != nil {
			return err
		}
		if len(files) == 0 {
			return fmt.Errorf("warc: crawl %q has no WARC files yet", *crawlName)
		}
		for _, f := range files {
			fmt.Fprintf(stdout, "%s\t%d records\t%d bytes\tindex %s\n", f.Name, f.Records, f.Bytes, f.CDXKey)
		}
		return nil
	}
	n, err := cfg.Normalizer().Normalize(*rawURL)
	if err != nil {
		return fmt.Errorf("warc: --url: %w", err)
	}
	caps, err := st.Archive().CapturesOf(ctx, *crawlName, urlnorm.Hash(n))
	if err != nil {
		return err
	}
	if len(caps) == 0 {
		return fmt.Errorf("warc: no archived capture of %s in crawl %q", n, *crawlName)
	}
	pick := len(caps) - 1
	for i, c := range caps {
		fmt.Fprintf(stdout, "%s\t%d\t%s\toffset %d\tlength %d\n", c.FetchedAt.UTC().Format(time.RFC3339Nano), c.Status, c.File, c.Offset, c.Length)
		if !when.IsZero() && absDur(c.FetchedAt.Sub(when)) < absDur(caps[pick].FetchedAt.Sub(when)) {
			pick = i
		}
	}
	if *out == "" {
		return nil
	}
	blobs, err := app.OpenBlob(ctx, cfg)
	if err != nil {
		return err
	}
	c := caps[pick]
	rec, err := blobs.GetRange(ctx, c.File, c.Offset, c.Length)
	if err != nil {
		return err
	}
	if err := os.WriteFile(*out, rec, 0o644); err != nil {
		return fmt.Errorf("warc: %w", err)
	}
	fmt.Fprintf(stdout, "wrote the capture of %s to %s\n", c.FetchedAt.UTC().Format(time.RFC3339Nano), *out)
	return nil
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// writeWACZ packages a crawl's WARC files as a WACZ at path, whole or not at all; with the
// bodies its revisits borrow from other crawls when borrowed says so.
func writeWACZ(ctx context.Context, cfg *config.Config, st *store.Store, crawlName, path, borrowed string, stdout io.Writer) error {
	b, err := app.OpenBlob(ctx, cfg)
	if err != nil {
		return err
	}
	lenders, err := st.Documents().BorrowedFrom(ctx, crawlName)
	if err != nil {
		return err
	}
	carry := false
	for _, l := range lenders {
		carry = carry || borrowed == "include" || (borrowed == "auto" && l.Gone)
	}
	bodies := segment.NewReader(b, int64(cfg.SegmentCacheBytes))
	packer := &wacz.Packer{Store: st, Blob: b, Software: "Trawler (" + cfg.UserAgent + ")", Borrowed: carry,
		Body: func(ctx context.Context, key string) ([]byte, error) {
			return bodies.Get(ctx, key, crawl.MaxBodyBytesCap)
		}}
	var pkg *wacz.Package
	if err := writeFile(path, func(w io.Writer) error {
		var err error
		pkg, err = packer.Write(ctx, w, crawlName, time.Now())
		return err
	}); err != nil {
		return fmt.Errorf("warc: %w", err)
	}
	var warcs int
	for _, r := range pkg.Resources {
		if strings.HasPrefix(r.Path, "archive/") {
			warcs++
		}
	}
	fmt.Fprintf(stdout, "%s: WACZ %s, %d WARC files, %d pages, main page %s\n", path, wacz.Version, warcs, pkg.Pages, pkg.MainPageURL)
	if carry {
		fmt.Fprintf(stdout, "carried %d bodies its revisits borrow from other crawls: the package replays alone\n", pkg.Borrowed)
		return nil
	}
	for _, l := range lenders {
		if l.Gone {
			fmt.Fprintf(stdout, "note: %d bodies are revisits of crawl %s, which is deleted: those pages replay only from a package made with --borrowed include\n", l.Bodies, l.Crawl)
			continue
		}
		fmt.Fprintf(stdout, "note: %d bodies are revisits of crawl %s (dedupAgainst): load its WACZ too to replay those pages, or package with --borrowed include\n", l.Bodies, l.Crawl)
	}
	return nil
}
