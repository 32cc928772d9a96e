// Package runner owns the Temporal workers of one process: which task queues it polls for
// its roles (workflow, fetch, process), what each registers, and their start and graceful stop.
// The worker binary and in-process tests share it.
package runner

import (
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/trawlerdev/trawler/activities"
	"github.com/trawlerdev/trawler/internal/blob"
	"github.com/trawlerdev/trawler/internal/config"
	"github.com/trawlerdev/trawler/workflows"
)

// Deps are the connections the activities use.
type Deps struct {
	DB   *pgxpool.Pool
	Blob *blob.Store
}

// Runner is the set of started workers.
type Runner struct {
	workers []worker.Worker
}

// Start creates and starts one worker per role in cfg.Roles. Stop them with Stop.
func Start(c client.Client, cfg *config.Config, deps Deps) (*Runner, error) {
	health := &activities.Health{DB: deps.DB, Blob: deps.Blob}
	r := &Runner{}
	for _, role := range cfg.Roles {
		var w worker.Worker
		switch role {
		case config.RoleWorkflow:
			w = worker.New(c, cfg.TaskQueue, worker.Options{WorkerStopTimeout: cfg.ShutdownTimeout})
			w.RegisterWorkflow(workflows.HealthCheckWorkflow)
			w.RegisterActivity(health)
		case config.RoleFetch:
			w = worker.New(c, cfg.FetchTaskQueue, worker.Options{
				WorkerStopTimeout:                  cfg.ShutdownTimeout,
				MaxConcurrentActivityExecutionSize: cfg.FetchConcurrency,
			})
			w.RegisterActivity(health)
		case config.RoleProcess:
			w = worker.New(c, cfg.ProcessTaskQueue, worker.Options{
				WorkerStopTimeout:                  cfg.ShutdownTimeout,
				MaxConcurrentActivityExecutionSize: cfg.ProcessConcurrency,
			})
			w.RegisterActivity(health)
		default:
			r.Stop()
			return nil, fmt.Errorf("runner: unknown role %q", role)
		}
		if err := w.Start(); err != nil {
			r.Stop()
			return nil, fmt.Errorf("runner: start %s worker: %w", role, err)
		}
		r.workers = append(r.workers, w)
	}
	return r, nil
}

// Stop stops every worker, letting in-flight activities finish within the stop timeout;
// activities still running then are retried elsewhere by Temporal.
func (r *Runner) Stop() {
	for _, w := range r.workers {
		w.Stop()
	}
	r.workers = nil
}
