package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"

	"github.com/PuerkitoBio/goquery"

	"github.com/trawlerdev/trawler/internal/config"
	"github.com/trawlerdev/trawler/internal/content"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/extract"
	"github.com/trawlerdev/trawler/internal/parse"
	"github.com/trawlerdev/trawler/internal/segment"
	"github.com/trawlerdev/trawler/internal/store"
)

// extractPage is how many documents one round of trawler extract reads and writes.
const extractPage = 200

// runExtract runs extraction rules again over a stored crawl's HTML documents, from their
// stored bodies (no refetch), replacing what the documents hold, and records the rules in the
// crawl's spec so its report and exports name their fields.
func runExtract(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("trawler extract", flag.ContinueOnError)
	crawlName := fs.String("crawl", "", "the crawl (required; stopped or done)")
	rulesFile := fs.String("rules", "", "a JSON file of extraction rules, as trawler crawl --extract takes (required)")
	cfg, err := config.Load(fs, args, os.Getenv)
	if err != nil {
		return err
	}
	if *crawlName == "" || *rulesFile == "" {
		return errors.New("extract: --crawl and --rules are required")
	}
	rules, err := readRules(*rulesFile)
	if err != nil {
		return err
	}
	if err := crawl.CheckExtract(rules); err != nil {
		return fmt.Errorf("%s: %w", *rulesFile, err)
	}
	compiled, err := extract.Compile(rules)
	if err != nil {
		return err
	}
	op, err := open(ctx, "extract", cfg, *crawlName, needBlob)
	if err != nil {
		return err
	}
	defer op.Close()
	// A running crawl's processing writes what its own rules find: two writers of one column.
	if _, live, err := op.st.Crawls().CrawlLive(ctx, *crawlName); err != nil {
		return err
	} else if live {
		return fmt.Errorf("extract: crawl %q is running or paused: stop it first", *crawlName)
	}
	// A stopped crawl's processing still reads the pages it fetched, with the crawl's rules.
	if p, err := op.st.Crawls().CrawlProgress(ctx, *crawlName); err != nil {
		return err
	} else if n := p.ByState[crawl.URLFetched]; n > 0 {
		return fmt.Errorf("extract: crawl %q still has %d fetched pages to process: run this once they are", *crawlName, n)
	}
	bodies := segment.NewReader(op.blob, int64(cfg.SegmentCacheBytes))
	perRule := map[string]int{}
	var docs, skipped int
	var after []byte
	for {
		targets, err := op.st.Documents().ExtractTargets(ctx, *crawlName, after, extractPage)
		if err != nil {
			return err
		}
		batch := make([]store.Extracted, 0, len(targets))
		for _, t := range targets {
			x, err := extractOne(ctx, bodies, compiled, t)
			if err != nil {
				fmt.Fprintf(stdout, "skipped %s: %v\n", t.URL, err)
				skipped++
				continue
			}
			for rule := range x {
				perRule[rule]++
			}
			var raw []byte
			if x != nil {
				if raw, err = json.Marshal(x); err != nil {
					return err
				}
			}
			batch = append(batch, store.Extracted{Hash: t.Hash, Extract: raw})
			docs++
		}
		if err := op.st.Documents().SetExtracted(ctx, *crawlName, batch); err != nil {
			return err
		}
		if len(targets) < extractPage {
			break
		}
		after = targets[len(targets)-1].Hash
	}
	if err := op.st.Crawls().SetExtractRules(ctx, *crawlName, rules); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "extracted %d documents of %s (%d skipped)", docs, *crawlName, skipped)
	for _, r := range rules {
		fmt.Fprintf(stdout, "; %s matched %d", r.Name, perRule[r.Name])
	}
	fmt.Fprintln(stdout)
	return nil
}

// extractOne runs the rules over one stored document's body, as processing does: on what
// content.Sniff calls HTML, with the URL as url.URL writes it. Nil for a document the rules
// do not take (its old values go).
func extractOne(ctx context.Context, bodies *segment.Reader, rules *extract.Rules, t store.ExtractTarget) (extract.Result, error) {
	pu, err := url.Parse(t.URL)
	if err != nil {
		return nil, fmt.Errorf("unparseable URL: %w", err)
	}
	page := pu.String()
	if !rules.Matches(page) {
		return nil, nil
	}
	body, err := bodies.Get(ctx, t.BodyKey, crawl.MaxBodyBytesCap)
	if err != nil {
		return nil, err
	}
	if content.Sniff(t.CType, body) != content.HTML {
		return nil, nil
	}
	var x extract.Result
	if _, err := parse.ParseWith(body, t.CType, pu, 0, 0, "", func(doc *goquery.Document) { x = rules.Run(page, doc) }); err != nil {
		return nil, err
	}
	return x, nil
}
