// Command trawler-worker runs Trawler's Temporal workers. One binary serves any subset of the
// roles (workflow, fetch, process) so fetch and processing capacity scale separately:
//
//	trawler-worker --roles fetch --fetch-concurrency 500
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/client"

	"github.com/trawlerdev/trawler/internal/app"
	"github.com/trawlerdev/trawler/internal/blob"
	"github.com/trawlerdev/trawler/internal/config"
	"github.com/trawlerdev/trawler/internal/confine"
	"github.com/trawlerdev/trawler/internal/metrics"
	"github.com/trawlerdev/trawler/internal/runner"
	"github.com/trawlerdev/trawler/internal/searchattrs"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "trawler-worker:", err)
		os.Exit(1)
	}
}

// defaultGOGC is the collector's target when GOGC is not set: a worker's garbage is mostly
// short-lived page buffers, and at Go's 100 marking took 23.5% of a processing worker's CPU
// and 8.4% of a fetch worker's in make bench; at 200, 18.6% and 4.1%, for a larger heap
// between collections (issue 36). GOGC or GOMEMLIMIT in the environment leaves the runtime as it is.
const defaultGOGC = 200

func run() error {
	if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetGCPercent(defaultGOGC)
	}
	fs := flag.NewFlagSet("trawler-worker", flag.ContinueOnError)
	cfg, err := config.Load(fs, os.Args[1:], os.Getenv)
	if err != nil {
		return err
	}
	log := app.NewLogger(cfg)
	// Before any child runs: a child taken over by what it reads gets no way into the worker.
	if err := confine.HideWorker(); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	// Each service is waited for (TRAWLER_STARTUP_WAIT): a worker restarted during an outage
	// joins when the service is back rather than leaving the crawl one worker short.
	db, err := app.Await(ctx, log, "postgres", cfg.StartupWait, func(ctx context.Context) (*pgxpool.Pool, error) {
		return app.OpenDB(ctx, cfg, log)
	})
	if err != nil {
		return err
	}
	defer db.Close()
	blobs, err := app.Await(ctx, log, "minio", cfg.StartupWait, func(ctx context.Context) (*blob.Store, error) {
		return app.OpenBlob(ctx, cfg)
	})
	if err != nil {
		return err
	}
	var handler client.MetricsHandler
	if cfg.MetricsAddr != "" {
		reg, err := metrics.New()
		if err != nil {
			return err
		}
		defer reg.Close()
		addr, err := reg.Serve(ctx, cfg.MetricsAddr, cfg.PProf)
		if err != nil {
			return err
		}
		log.Info("serving Prometheus metrics", "url", "http://"+addr+"/metrics")
		handler = reg.Handler()
	}
	tc, err := app.Await(ctx, log, "temporal", cfg.StartupWait, func(ctx context.Context) (client.Client, error) {
		return app.DialTemporalWithMetrics(ctx, cfg, log, handler)
	})
	if err != nil {
		return err
	}
	defer tc.Close()
	if err := searchattrs.Check(ctx, tc, cfg.TemporalNamespace); err != nil {
		if !searchattrs.CannotList(err) {
			return err
		}
		// A cluster that does not let this client list them (a cloud's own API for that):
		// the operator's setup is trusted.
		log.Warn("could not check the namespace's search attributes", "namespace", cfg.TemporalNamespace, "error", err)
	}

	r, err := runner.Start(tc, cfg, runner.Deps{DB: db, Blob: blobs})
	if err != nil {
		return err
	}
	log.Info("worker started", "roles", cfg.Roles, "temporal", cfg.TemporalAddress,
		"taskQueue", cfg.TaskQueue, "fetchQueue", cfg.FetchTaskQueue, "processQueue", cfg.ProcessTaskQueue)
	<-ctx.Done()
	log.Info("stopping: letting in-flight activities finish", "timeout", cfg.ShutdownTimeout)
	r.Stop()
	log.Info("worker stopped")
	return nil
}
