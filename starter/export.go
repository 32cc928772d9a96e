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

	"github.com/trawlerdev/trawler/internal/config"
	"github.com/trawlerdev/trawler/internal/export"
	"github.com/trawlerdev/trawler/internal/segment"
)

// runExport writes a crawl's stored pages as JSON Lines, CSV or Parquet, to standard output
// (so it pipes) or a file, with a progress bar on a terminal.
func runExport(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("trawler export", flag.ContinueOnError)
	crawlName := fs.String("crawl", "", "the crawl (required)")
	format := fs.String("format", "jsonl", "jsonl, csv or parquet")
	fields := fs.String("fields", "", "comma-separated fields (default all): "+strings.Join(export.Fields, ","))
	since := fs.String("since", "", "only pages fetched at or after this time (RFC 3339, or an age such as 24h)")
	out := fs.String("out", "", "write to this file (default standard output)")
	csvSafe := fs.Bool("csv-safe", false, "prefix CSV cells that begin with = + - @ (a spreadsheet formula) with a single quote")
	cfg, err := config.Load(fs, args, os.Getenv)
	if err != nil {
		return err
	}
	o := export.Options{Crawl: *crawlName, Format: *format, CSVSafe: *csvSafe}
	if *fields != "" {
		for _, f := range strings.Split(*fields, ",") {
			o.Fields = append(o.Fields, strings.TrimSpace(f))
		}
	}
	if *since != "" {
		if o.Since, err = parseSince(*since, time.Now()); err != nil {
			return err
		}
	}
	if len(fs.Args()) > 0 {
		return fmt.Errorf("export: unexpected arguments %q", fs.Args())
	}
	if err := o.Check(); err != nil {
		return err
	}
	if *out == "" && *format == "parquet" && isTerminal(os.Stdout) && stdout == os.Stdout {
		return errors.New("export: Parquet is binary: give --out FILE or redirect standard output")
	}
	op, err := open(ctx, "export", cfg, o.Crawl, needBlob)
	if err != nil {
		return err
	}
	defer op.Close()
	st, b := op.st, op.blob
	if isTerminal(os.Stderr) {
		total, err := st.Inspect().CountStoredPages(ctx, o.Crawl, o.Since)
		if err != nil {
			return err
		}
		o.Progress = progressBar(os.Stderr, total)
	}
	src := &export.Source{Store: st, Texts: segment.NewReader(b, int64(cfg.SegmentCacheBytes))}
	var n int64
	write := func(w io.Writer) (err error) {
		n, err = src.Write(ctx, w, o)
		return err
	}
	if *out == "" {
		err = write(stdout)
	} else {
		err = writeFile(*out, write) // whole or not at all
	}
	if o.Progress != nil {
		fmt.Fprintln(os.Stderr)
	}
	if err != nil {
		return err
	}
	if *out != "" {
		fmt.Fprintf(stdout, "%d pages written to %s\n", n, *out)
	}
	return nil
}

// parseSince reads an RFC 3339 time or an age before now.
func parseSince(v string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(v); err == nil && d > 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("export: --since %q: want RFC 3339 (2026-11-24T10:00:00Z) or an age (24h)", v)
}

// progressBar draws "[####    ] done/total pages" on w, redrawn in place.
func progressBar(w io.Writer, total int64) func(int64) {
	return func(done int64) {
		const width = 30
		filled := width
		if total > 0 {
			filled = int(min(done, total) * width / total)
		}
		fmt.Fprintf(w, "\r[%s%s] %d/%d pages", strings.Repeat("#", filled), strings.Repeat(" ", width-filled), done, total)
	}
}
