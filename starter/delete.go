package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"time"

	"github.com/trawlerdev/trawler/internal/config"
	"github.com/trawlerdev/trawler/internal/retention"
)

// runDelete deletes a crawl (its rows, segments and WARC files), or every crawl that ended
// longer ago than --older-than; --dry-run lists what would go.
func runDelete(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("trawler delete", flag.ContinueOnError)
	var crawls stringList
	fs.Var(&crawls, "crawl", "a crawl to delete (not running); repeatable")
	olderThan := fs.Duration("older-than", 0, "delete every crawl that ended (done or stopped) longer ago than this, e.g. 720h")
	dryRun := fs.Bool("dry-run", false, "list what would be deleted, delete nothing")
	asJSON := fs.Bool("json", false, "print what was deleted as JSON")
	cfg, err := config.Load(fs, args, os.Getenv)
	if err != nil {
		return err
	}
	switch {
	case len(crawls) == 0 && *olderThan == 0:
		return errors.New("delete: name a crawl (--crawl NAME) or an age (--older-than 720h)")
	case len(crawls) > 0 && *olderThan != 0:
		return errors.New("delete: --crawl and --older-than exclude each other")
	case *olderThan < 0:
		return fmt.Errorf("delete: --older-than %s: want a positive age", *olderThan)
	case len(fs.Args()) > 0:
		return fmt.Errorf("delete: unexpected arguments %q (crawls are named with --crawl)", fs.Args())
	}
	// Temporal tells whether a crawl's workflow has closed; each named crawl is checked
	// below (a missing one is reported with the others).
	op, err := open(ctx, "delete", cfg, "", needBlob|needTemporal)
	if err != nil {
		return err
	}
	defer op.Close()
	d := &retention.Deleter{Store: op.st, Blob: op.blob, Open: retention.WorkflowOpen(op.tc, cfg.IDPrefix)}
	var plans []retention.Plan
	var errs []error
	if *olderThan > 0 {
		plans, err = d.Sweep(ctx, *olderThan, time.Now(), *dryRun)
		errs = append(errs, err)
	}
	for _, c := range crawls {
		p, err := d.Delete(ctx, c, *dryRun)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		plans = append(plans, p)
	}
	if *asJSON {
		if err := printJSON(stdout, plans); err != nil {
			return err
		}
	} else {
		for _, p := range plans {
			printPlan(stdout, p)
		}
		if len(plans) == 0 && errors.Join(errs...) == nil {
			fmt.Fprintln(stdout, "nothing to delete")
		}
	}
	return errors.Join(errs...)
}

// printPlan says what a delete removed (or, dry, would remove), one line per object.
func printPlan(w io.Writer, p retention.Plan) {
	verb := "deleted"
	if p.DryRun {
		verb = "would delete"
	}
	for _, k := range p.Objects {
		fmt.Fprintf(w, "%s object %s\n", verb, k)
	}
	for _, k := range p.Kept {
		fmt.Fprintf(w, "kept object %s (another crawl's fetches point at bodies in it)\n", k)
	}
	tables := make([]string, 0, len(p.Rows))
	var rows int64
	for t, n := range p.Rows {
		tables = append(tables, t)
		rows += n
	}
	sort.Strings(tables)
	for _, t := range tables {
		fmt.Fprintf(w, "%s %d rows of %s\n", verb, p.Rows[t], t)
	}
	if p.Legacy > 0 {
		fmt.Fprintf(w, "left %d items in segments written before segments were per crawl (shared with other crawls)\n", p.Legacy)
	}
	fmt.Fprintf(w, "crawl %s: %s %d objects and %d rows; kept %d objects\n", p.Crawl, verb, len(p.Objects), rows, len(p.Kept))
}
