package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/trawlerdev/trawler/internal/app"
	"github.com/trawlerdev/trawler/internal/config"
	"github.com/trawlerdev/trawler/internal/searchattrs"
)

// runSetup prepares an existing deployment for Trawler, idempotently: the schema migrations
// on DATABASE_URL, the bucket on S3, and the search attributes on the Temporal namespace
// (through the operator service, which any cluster has; its own setup is the operator's).
func runSetup(ctx context.Context, args []string, stdout io.Writer) error {
	cfg, err := config.Load(flag.NewFlagSet("trawler setup", flag.ContinueOnError), args, os.Getenv)
	if err != nil {
		return err
	}
	log := app.NewLogger(cfg)
	db, err := app.OpenDB(ctx, cfg, log)
	if err != nil {
		return err
	}
	db.Close()
	fmt.Fprintln(stdout, "postgres: schema up to date")
	if _, err := app.OpenBlob(ctx, cfg); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "s3: bucket %s ready\n", cfg.S3Bucket)
	tc, err := app.DialTemporal(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer tc.Close()
	added, err := searchattrs.Register(ctx, tc, cfg.TemporalNamespace)
	if err != nil {
		return err
	}
	if len(added) > 0 {
		fmt.Fprintf(stdout, "temporal: registered search attributes %s on namespace %s\n", strings.Join(added, ", "), cfg.TemporalNamespace)
	} else {
		fmt.Fprintf(stdout, "temporal: namespace %s has every search attribute\n", cfg.TemporalNamespace)
	}
	return nil
}
