package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/trawlerdev/trawler/internal/app"
	"github.com/trawlerdev/trawler/internal/config"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/workflows"
)

func runMigrate(ctx context.Context, args []string, stdout io.Writer) error {
	cfg, err := config.Load(flag.NewFlagSet("trawler migrate", flag.ContinueOnError), args, os.Getenv)
	if err != nil {
		return err
	}
	db, err := app.OpenDB(ctx, cfg, app.NewLogger(cfg))
	if err != nil {
		return err
	}
	defer db.Close()
	var version int
	if err := db.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&version); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	fmt.Fprintf(stdout, "schema at version %d\n", version)
	return nil
}

func runCheck(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("trawler check", flag.ContinueOnError)
	timeout := fs.Duration("timeout", 30*time.Second, "how long to wait for the workers")
	cfg, err := config.Load(fs, args, os.Getenv)
	if err != nil {
		return err
	}
	log := app.NewLogger(cfg)
	tc, err := app.DialTemporal(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer tc.Close()
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	run, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		TaskQueue:                cfg.TaskQueue,
		WorkflowExecutionTimeout: *timeout,
	}, workflows.HealthCheckWorkflow, workflows.HealthCheckInput{
		TaskQueues: []string{cfg.TaskQueue, crawl.HostQueue(cfg.TaskQueue), cfg.FetchTaskQueue, cfg.ProcessTaskQueue},
	})
	if err != nil {
		return fmt.Errorf("start health check: %w", err)
	}
	var res workflows.HealthCheckResult
	if err := run.Get(ctx, &res); err != nil {
		return fmt.Errorf("health check %s did not complete (are workers running for every role?): %w", run.GetID(), err)
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(res)
}
