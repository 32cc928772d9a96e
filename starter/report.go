package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/trawlerdev/trawler/internal/config"
	"github.com/trawlerdev/trawler/internal/report"
)

// runReport writes a crawl's report into a directory: NAME.html, one self-contained page of
// charts, and NAME.json, the same figures.
func runReport(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("trawler report", flag.ContinueOnError)
	crawlName := fs.String("crawl", "", "the crawl (required)")
	out := fs.String("out", ".", "the directory to write NAME.html and NAME.json into")
	cfg, err := config.Load(fs, args, os.Getenv)
	if err != nil {
		return err
	}
	if *crawlName == "" {
		return errors.New("report: --crawl is required")
	}
	if len(fs.Args()) > 0 {
		return fmt.Errorf("report: unexpected arguments %q", fs.Args())
	}
	if st, err := os.Stat(*out); err == nil && !st.IsDir() {
		return fmt.Errorf("report: --out %q is not a directory", *out)
	}
	op, err := open(ctx, "report", cfg, *crawlName, 0)
	if err != nil {
		return err
	}
	defer op.Close()
	figures, err := op.st.Inspect().CrawlFigures(ctx, *crawlName)
	if err != nil {
		return err
	}
	// A folder that does not exist yet is made, as mkdir -p would (the umask decides its mode),
	// once the crawl is known to exist.
	if err := os.MkdirAll(*out, 0o777); err != nil {
		return fmt.Errorf("report: --out %q: %w", *out, err)
	}
	r := report.New(figures, time.Now())
	base := filepath.Join(*out, filepath.Base(*crawlName))
	for _, f := range []struct {
		path  string
		write func(io.Writer) error
	}{{base + ".html", r.HTML}, {base + ".json", r.JSON}} {
		if err := writeFile(f.path, f.write); err != nil {
			return fmt.Errorf("report: %w", err)
		}
		fmt.Fprintln(stdout, f.path)
	}
	return nil
}
