package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/trawlerdev/trawler/internal/config"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/fetch"
	"github.com/trawlerdev/trawler/internal/fidelity"
	"github.com/trawlerdev/trawler/internal/netguard"
	"github.com/trawlerdev/trawler/internal/policy"
	"github.com/trawlerdev/trawler/internal/render"
	"github.com/trawlerdev/trawler/internal/segment"
	"github.com/trawlerdev/trawler/internal/urlnorm"
)

// runQA measures a crawl's replay fidelity: each sampled page rendered live and replayed from
// the crawl's captures alone by the same headless browser, compared by pixels and visible text.
func runQA(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("trawler qa", flag.ContinueOnError)
	crawlName := fs.String("crawl", "", "the crawl (required)")
	sample := fs.Int("sample", 10, "how many archived HTML pages to measure: the seeds' first, then a fixed sample of the rest")
	var pages stringList
	fs.Var(&pages, "page", "measure this archived page instead of a sample (repeat for more)")
	timeout := fs.Duration("timeout", time.Minute, "time a page may take to be looked at, live or replayed (its polite waits included)")
	shots := fs.String("shots", "", "write what each page showed live and replayed (screenshot .png, visible text .txt) into this directory")
	floor := fs.Float64("min", 0, "exit non-zero when a measured page scores below this (0–1; 0: never)")
	cfg, err := config.Load(fs, args, os.Getenv)
	if err != nil {
		return err
	}
	if *crawlName == "" {
		return errors.New("qa: --crawl is required")
	}
	if *sample < 1 || *sample > 1000 {
		return fmt.Errorf("qa: --sample %d: want 1 to 1000", *sample)
	}
	if *floor < 0 || *floor > 1 {
		return fmt.Errorf("qa: --min %g: want 0 to 1", *floor)
	}
	op, err := open(ctx, "qa", cfg, *crawlName, needBlob)
	if err != nil {
		return err
	}
	defer op.Close()
	if *timeout <= 0 {
		return fmt.Errorf("qa: --timeout %s: want a positive duration", *timeout)
	}
	ropts := cfg.Render
	ropts.PageTimeout, ropts.Concurrency = *timeout, 1
	browser, err := render.Start(ropts)
	if err != nil {
		return fmt.Errorf("qa: %w", err)
	}
	defer browser.Close()
	bodies := segment.NewReader(op.blob, int64(cfg.SegmentCacheBytes))
	m := &fidelity.Measurer{Store: op.st, Browser: browser, Norm: cfg.Normalizer(), MaxBytes: ropts.MaxBytes,
		Client: fetch.New(fetch.Options{Dialer: netguard.New(netguard.Options{ConnectTo: cfg.ConnectTo, Allow: cfg.AllowNetworks}),
			RootCAs: cfg.RootCAs, TrustedProxy: cfg.TrustedProxy()}),
		Crawls: &policy.Crawls{Store: op.st.Crawls(), Norm: cfg.Normalizer(), DefaultUserAgent: cfg.UserAgent, DefaultProxy: cfg.Proxy,
			Ports: cfg.AllowPorts},
		Body: func(ctx context.Context, key string) ([]byte, error) {
			return bodies.Get(ctx, key, crawl.MaxBodyBytesCap)
		}}
	if *shots != "" {
		if err := os.MkdirAll(*shots, 0o755); err != nil {
			return fmt.Errorf("qa: --shots: %w", err)
		}
		n := 0
		m.Shots = func(page string, live, replay *render.Seen) {
			n++
			for kind, seen := range map[string]*render.Seen{"live": live, "replay": replay} {
				base := filepath.Join(*shots, fmt.Sprintf("%03d-%s", n, kind))
				if err := errors.Join(os.WriteFile(base+".png", seen.PNG, 0o644), os.WriteFile(base+".txt", []byte(seen.Text), 0o644)); err != nil {
					fmt.Fprintf(stdout, "qa: --shots: %v\n", err)
				}
			}
			fmt.Fprintf(stdout, "%s\tshots %03d-live and %03d-replay (.png, .txt)\n", page, n, n)
		}
	}
	var list []string
	if len(pages) > 0 {
		for _, p := range pages {
			n, err := cfg.Normalizer().Normalize(p)
			if err != nil {
				return fmt.Errorf("qa: --page %q: %w", p, err)
			}
			if _, ok, err := op.st.Archive().LastAnswer(ctx, *crawlName, urlnorm.Hash(n)); err != nil {
				return fmt.Errorf("qa: %w", err)
			} else if !ok {
				return fmt.Errorf("qa: --page %s: crawl %q archived no capture of it", n, *crawlName)
			}
			list = append(list, n)
		}
	} else if list, err = m.Sample(ctx, *crawlName, *sample); err != nil {
		return fmt.Errorf("qa: %w", err)
	}
	if len(list) == 0 {
		return fmt.Errorf("qa: crawl %q has no archived HTML page to measure", *crawlName)
	}
	measured, err := m.Measure(ctx, *crawlName, list)
	if serr := op.st.Archive().SaveFidelity(context.WithoutCancel(ctx), *crawlName, measured); serr != nil {
		return errors.Join(err, serr)
	}
	if err != nil {
		return fmt.Errorf("qa: %w", err)
	}
	var sum float64
	var n, below, failed int
	for _, p := range measured {
		if p.Error != "" {
			fmt.Fprintf(stdout, "%s\tnot measured: %s\n", p.URL, p.Error)
			failed++
			continue
		}
		fmt.Fprintf(stdout, "%s\tscore %.3f\tpixels %.3f\ttext %.3f\tnot archived %d of %d requests", p.URL, p.Score, p.Pixels, p.Text, p.Missing, p.Requests)
		if len(p.MissingURLs) > 0 {
			fmt.Fprintf(stdout, " (%s)", strings.Join(p.MissingURLs, " "))
		}
		fmt.Fprintln(stdout)
		sum += p.Score
		n++
		if p.Score < *floor {
			below++
		}
	}
	if n == 0 {
		return errors.New("qa: no page could be measured")
	}
	fmt.Fprintf(stdout, "replay fidelity of %s: mean %.3f over %d pages, %d not measured (trawler report shows them)\n", *crawlName, sum/float64(n), n, failed)
	if *floor > 0 && below+failed > 0 {
		return fmt.Errorf("qa: %d of %d pages score below %g, and %d could not be measured", below, len(measured), *floor, failed)
	}
	return nil
}
