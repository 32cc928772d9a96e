package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/trawlerdev/trawler/internal/app"
	"github.com/trawlerdev/trawler/internal/config"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/store"
)

// signalCrawl sends a control signal with its JSON payload to a running crawl.
func signalCrawl(ctx context.Context, name string, args []string, stdout io.Writer, setup func(*flag.FlagSet),
	payload func(rest []string) (string, any, error)) error {
	var crawlName string
	fs := flag.NewFlagSet("trawler "+name, flag.ContinueOnError)
	fs.StringVar(&crawlName, "crawl", "", "the running crawl (required)")
	if setup != nil {
		setup(fs)
	}
	cfg, err := config.Load(fs, args, os.Getenv)
	if err != nil {
		return err
	}
	if crawlName == "" {
		return fmt.Errorf("%s: --crawl is required", name)
	}
	signal, body, err := payload(fs.Args()) // bad input fails here, before any connection
	if err != nil {
		return err
	}
	tc, err := app.DialTemporal(ctx, cfg, app.NewLogger(cfg))
	if err != nil {
		return err
	}
	defer tc.Close()
	id := crawl.CrawlWorkflowID(cfg.IDPrefix, crawlName)
	if err := tc.SignalWorkflow(ctx, id, "", signal, body); err != nil {
		return fmt.Errorf("%s: crawl %s: %w (is it running?)", name, crawlName, err)
	}
	raw, _ := json.Marshal(body)
	fmt.Fprintf(stdout, "sent %s %s to crawl %s; its result appears under \"controls\" in `trawler status %s`\n", signal, raw, crawlName, crawlName)
	return nil
}

func runSeed(ctx context.Context, args []string, stdout io.Writer) error {
	return signalCrawl(ctx, "seed", args, stdout, nil, func(rest []string) (string, any, error) {
		seeds, err := readSeeds(rest)
		if err != nil {
			return "", nil, err
		}
		if len(seeds) == 0 {
			return "", nil, errors.New("usage: trawler seed --crawl NAME URL|FILE...")
		}
		for _, s := range seeds {
			if why := crawl.CheckSeed(s); why != "" {
				return "", nil, fmt.Errorf("seed %q: %s", s, why)
			}
		}
		return crawl.SignalAddSeeds, crawl.AddSeeds{Seeds: seeds}, nil
	})
}

func runBlock(ctx context.Context, args []string, stdout io.Writer) error {
	var b crawl.Block
	return signalCrawl(ctx, "block", args, stdout, func(fs *flag.FlagSet) {
		fs.Var((*stringList)(&b.Hosts), "host", "a host to stop crawling, with its subdomains; repeatable")
		fs.Var((*stringList)(&b.Patterns), "pattern", "a regular expression (Go syntax) on normalized URLs; repeatable")
	}, func(rest []string) (string, any, error) {
		if len(rest) > 0 {
			return "", nil, fmt.Errorf("block: unexpected arguments %v (use --host and --pattern)", rest)
		}
		return crawl.SignalBlock, b, b.Validate()
	})
}

// runDLQ lists dead letters (from Postgres) or replays them (through the crawl's signal).
func runDLQ(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) == 0 || (args[0] != "list" && args[0] != "replay") {
		return errors.New("usage: trawler dlq list|replay --crawl NAME [--host HOST] [--reason TEXT]")
	}
	var f store.DeadLetterFilter
	filters := func(fs *flag.FlagSet) {
		fs.StringVar(&f.Host, "host", "", "only this host's dead letters")
		fs.StringVar(&f.Reason, "reason", "", "only dead letters whose reason contains this (case-insensitive)")
	}
	if args[0] == "replay" {
		return signalCrawl(ctx, "dlq replay", args[1:], stdout, filters, func(rest []string) (string, any, error) {
			return crawl.SignalReplay, crawl.Replay{Host: f.Host, Reason: f.Reason}, nil
		})
	}
	fs := flag.NewFlagSet("trawler dlq list", flag.ContinueOnError)
	crawlName := fs.String("crawl", "", "the crawl (required)")
	limit := fs.Int("limit", 100, "at most this many, newest first")
	asJSON := fs.Bool("json", false, "print JSON, with every attempt")
	filters(fs)
	cfg, err := config.Load(fs, args[1:], os.Getenv)
	if err != nil {
		return err
	}
	if *crawlName == "" {
		return errors.New("dlq list: --crawl is required")
	}
	op, err := open(ctx, "dlq list", cfg, *crawlName, 0)
	if err != nil {
		return err
	}
	defer op.Close()
	dl, err := op.st.Fetches().DeadLettersWhere(ctx, *crawlName, f, *limit)
	if err != nil {
		return err
	}
	if *asJSON {
		type letter struct {
			store.DeadLetter
			Attempts json.RawMessage `json:"attempts"`
		}
		out := make([]letter, len(dl))
		for i, d := range dl {
			out[i] = letter{DeadLetter: d, Attempts: d.Attempts}
		}
		return printJSON(stdout, out)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "WHEN\tHOST\tREASON\tURL")
	for _, d := range dl {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", d.Created.UTC().Format("2006-01-02 15:04:05"), d.Host, d.Reason, d.URL)
	}
	return tw.Flush()
}
