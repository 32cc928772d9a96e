// Package runner owns the Temporal workers of one process: which task queues it polls for
// its roles (workflow, fetch, process), what each registers, and their start and graceful stop.
// The worker binary and in-process tests share it.
package runner

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/trawlerdev/trawler/activities"
	"github.com/trawlerdev/trawler/internal/admit"
	"github.com/trawlerdev/trawler/internal/blob"
	"github.com/trawlerdev/trawler/internal/config"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/deliver"
	"github.com/trawlerdev/trawler/internal/export"
	"github.com/trawlerdev/trawler/internal/fetch"
	"github.com/trawlerdev/trawler/internal/membudget"
	"github.com/trawlerdev/trawler/internal/netguard"
	"github.com/trawlerdev/trawler/internal/pacing"
	"github.com/trawlerdev/trawler/internal/render"
	"github.com/trawlerdev/trawler/internal/retention"
	"github.com/trawlerdev/trawler/internal/seen"
	"github.com/trawlerdev/trawler/internal/segment"
	"github.com/trawlerdev/trawler/internal/store"
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
	// stopping is closed when Stop begins: fetch leases end early and a lease's processing
	// hands itself on, so they move to a live worker at once instead of after their
	// heartbeat timeout (they run for minutes; the stop timeout is seconds).
	stopping chan struct{}
	once     sync.Once
	// unwatch ends the fetch role's watch for crawl controls, after its workers stopped.
	unwatch context.CancelFunc
	// closers run after the workers stopped (the render role's browser).
	closers []func()
}

// fetchHeartbeatThrottle is the fetch worker's heartbeat throttle (TRAWLER_HEARTBEAT_MAX when
// shorter).
const fetchHeartbeatThrottle = time.Second

// Start creates and starts one worker per role in cfg.Roles. Stop them with Stop.
func Start(c client.Client, cfg *config.Config, deps Deps) (*Runner, error) {
	st := store.New(deps.DB)
	// Exact mode (the default) never reads a Bloom filter: every link goes to Postgres. So
	// only approximate mode gets one (10M URLs at 1e-6 is 34 MiB, and each admission's Add
	// hashed every link under one lock for nothing); a nil filter skips nothing.
	var filter *seen.Filter
	if cfg.SeenMode == "approximate" {
		filter = seen.New(cfg.BloomExpected, 1e-6, true)
	}
	svc := admit.New(c, cfg, st, filter)
	frontier := NewFrontier(svc, cfg, st)
	crawls, admitter := frontier.Crawls, frontier.Admitter
	if cfg.SeenMode == "approximate" && deps.Blob != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		go func() {
			defer cancel()
			warmSeen(ctx, filter, st, deps.Blob, cfg.BloomExpected, slog.Default())
		}()
	}
	health := &activities.Health{DB: deps.DB, Blob: deps.Blob}

	// One budget of body bytes for the whole process: its fetch and render roles share it.
	bodyBudget := membudget.New("body", cfg.BodyBudget)
	watchCtx, unwatch := context.WithCancel(context.Background())
	r := &Runner{stopping: make(chan struct{}), unwatch: unwatch}
	// One fetch stage a process, for its fetch role's leases and its workflow role's local
	// ones: one segment writer of bodies (its objects are named for the process), one client.
	var theFetcher *activities.Fetcher
	fetcher := func() *activities.Fetcher {
		if theFetcher == nil {
			dialer := netguard.New(netguard.Options{ConnectTo: cfg.ConnectTo, Allow: cfg.AllowNetworks})
			bodies := segment.NewWriter(deps.Blob, segment.Options{Prefix: "segments/bodies", Name: processName(),
				MaxAge: cfg.SegmentMaxAge, MaxBytes: cfg.SegmentMaxBytes})
			theFetcher = &activities.Fetcher{Store: st, Blob: deps.Blob, Bodies: bodies, Client: fetch.New(fetch.Options{Dialer: dialer, RootCAs: cfg.RootCAs, TrustedProxy: cfg.TrustedProxy(), Budget: bodyBudget}),
				Crawls: crawls, Admitter: admitter, Dialer: dialer, Stopping: r.stopping,
				Schedule: schedule(st, dialer, cfg),
				Control:  st.WatchControl(watchCtx), BeatEvery: cfg.HeartbeatMax, Beats: c}
		}
		return theFetcher
	}
	for _, role := range cfg.Roles {
		opts := worker.Options{WorkerStopTimeout: cfg.ShutdownTimeout, MaxHeartbeatThrottleInterval: cfg.HeartbeatMax}
		var w worker.Worker
		switch role {
		case config.RoleWorkflow:
			// Two workers: the crawls' (their processing and delivery children too) on the
			// workflow queue, the hosts' on theirs (crawl.HostQueue), so that a crawl's task never
			// waits behind its thousands of hosts'. Each registers the whole role: host runs
			// started before the hosts had their own queue go on on the first, and the CLI may
			// start any workflow on either.
			var local *activities.Fetcher
			if cfg.LocalLease > 0 {
				// Host runs' first leases are local activities here (crawl.HostConfig.LocalLease),
				// as many at once as the workflow worker has room for. With local leases off no fetch
				// stage is built (no client, segment writer or LISTEN connection at start-up): a host
				// woken with them on by another process gets errNoFetchStage and an activity lease.
				local = fetcher()
				local.LocalSlots = make(chan struct{}, cfg.LocalLeaseConcurrency)
				// The SDK runs a local activity inside its workflow task: the task holds its slot
				// while the lease runs (about TRAWLER_LOCAL_LEASE), and so does the local
				// activity. Both kinds get the leases' number on top of the SDK's defaults, so
				// that running leases never hold back other hosts' workflow tasks or the short
				// local activities (a hand-back, a tell) every workflow runs. Both of the role's
				// workers get them (they share the leases' slots: a host run started on the
				// crawls' queue runs its lease there).
				opts.MaxConcurrentWorkflowTaskExecutionSize = sdkDefaultSlots + cfg.LocalLeaseConcurrency
				opts.MaxConcurrentLocalActivityExecutionSize = sdkDefaultSlots + cfg.LocalLeaseConcurrency
			}
			hosts := workflowWorker(c, crawl.HostQueue(cfg.TaskQueue), opts, health, frontier, local)
			if err := hosts.Start(); err != nil {
				r.Stop()
				return nil, fmt.Errorf("runner: start the hosts' workflow worker: %w", err)
			}
			r.workers = append(r.workers, hosts)
			w = workflowWorker(c, cfg.TaskQueue, opts, health, frontier, local)
		case config.RoleFetch:
			opts.MaxConcurrentActivityExecutionSize = cfg.FetchConcurrency
			opts.WorkerActivitiesPerSecond, opts.TaskQueueActivitiesPerSecond = cfg.FetchRate, cfg.FetchQueueRate
			// Pollers scale with the queue: at a crawl's start a thousand host leases wait to be
			// picked up at once (two fixed pollers took them at ~100 a second), then few do.
			opts.ActivityTaskPollerBehavior = worker.NewPollerBehaviorAutoscaling(worker.PollerBehaviorAutoscalingOptions{})
			// Leases send their own heartbeats, by task token (activities/token_beats.go: the
			// SDK's throttle would also be each beat's time to land, and a busy server's slow
			// answer cancelled the lease); this throttle is for the fetch queue's other
			// activities, and kept short.
			opts.MaxHeartbeatThrottleInterval = min(cfg.HeartbeatMax, fetchHeartbeatThrottle)
			w = worker.New(c, cfg.FetchTaskQueue, opts)
			w.RegisterActivity(health)
			w.RegisterActivity(fetcher())
		case config.RoleProcess:
			// A lease's processing holds its activity slot for the whole lease, mostly waiting for
			// pages: slots for the leases followed, and a gate for the CPU-bound work itself.
			opts.MaxConcurrentActivityExecutionSize = cfg.ProcessConcurrency + cfg.ProcessLeases
			opts.WorkerActivitiesPerSecond, opts.TaskQueueActivitiesPerSecond = cfg.ProcessRate, cfg.ProcessQueueRate
			w = worker.New(c, cfg.ProcessTaskQueue, opts)
			w.RegisterActivity(health)
			reader := segment.NewReader(deps.Blob, int64(cfg.SegmentCacheBytes))
			texts := segment.NewWriter(deps.Blob, segment.Options{Prefix: "segments/text", Name: processName(),
				MaxAge: cfg.SegmentMaxAge, MaxBytes: cfg.SegmentMaxBytes})
			w.RegisterActivity(&activities.Processor{Store: st, Blob: deps.Blob, Bodies: reader, Texts: texts, Crawls: crawls,
				Admitter: admitter, Gate: make(chan struct{}, cfg.ProcessConcurrency), Parse: membudget.New("parse", cfg.ParseBudget), Stopping: r.stopping, PDF: cfg.PDF,
				Beats: c})
			w.RegisterActivity(&activities.Deliverer{Outputs: deliverer(st, deps.Blob, reader, cfg)})
			w.RegisterActivity(&activities.Archiver{Store: st, Blob: deps.Blob, Bodies: reader, Crawls: crawls, Software: "Trawler (" + cfg.UserAgent + ")", Beats: c})
			if cfg.Retention > 0 && deps.Blob != nil {
				d := &retention.Deleter{Store: st, Blob: deps.Blob, Open: retention.WorkflowOpen(c, cfg.IDPrefix)}
				go d.Run(watchCtx, cfg.Retention, retention.SweepEvery, slog.Default())
			}
		case config.RoleRender:
			// Few activities: each is a crawl's render run, the browser's tabs its bound.
			opts.MaxConcurrentActivityExecutionSize = 16
			w = worker.New(c, cfg.RenderTaskQueue, opts)
			browser, err := render.Start(cfg.Render)
			if err != nil {
				r.Stop()
				return nil, fmt.Errorf("runner: the render role needs Chromium (sandboxed): %w", err)
			}
			w.RegisterActivity(&activities.Health{DB: deps.DB, Blob: deps.Blob, Browser: browser})
			r.closers = append(r.closers, browser.Close)
			dialer := netguard.New(netguard.Options{ConnectTo: cfg.ConnectTo, Allow: cfg.AllowNetworks})
			w.RegisterActivity(&activities.Renderer{Store: st, Bodies: segment.NewReader(deps.Blob, int64(cfg.SegmentCacheBytes)),
				DOMs: segment.NewWriter(deps.Blob, segment.Options{Prefix: "segments/dom", Name: processName(),
					MaxAge: cfg.SegmentMaxAge, MaxBytes: cfg.SegmentMaxBytes}),
				Crawls: crawls, Admitter: admitter, Browser: browser, Stopping: r.stopping,
				Schedule: schedule(st, dialer, cfg),
				Client:   fetch.New(fetch.Options{Dialer: dialer, RootCAs: cfg.RootCAs, TrustedProxy: cfg.TrustedProxy(), Budget: bodyBudget})})
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

// workflowWorker is a worker of the workflow role on queue: every workflow, and the
// activities they run in it (local: the local fetch leases; nil: none).
func workflowWorker(c client.Client, queue string, opts worker.Options, health *activities.Health, frontier *activities.Frontier,
	local *activities.Fetcher) worker.Worker {
	// Workflow pollers scale with the queue, and one always polls the normal queue. With the
	// SDK's two fixed pollers both poll the worker's sticky queue while it has a backlog, as a
	// busy hosts' worker's always does: a new host's first task, and any task that missed its
	// sticky queue, waited on the normal queue (360 tasks, over 6 minutes old, on the hour
	// bench of 2026-11-28 13:46). (A task written to a partition its few pollers seldom visit is
	// the server's to avoid: one write partition, deploy/temporal/dynamicconfig.yaml.)
	opts.WorkflowTaskPollerBehavior = worker.NewPollerBehaviorAutoscaling(worker.PollerBehaviorAutoscalingOptions{})
	w := worker.New(c, queue, opts)
	w.RegisterWorkflow(workflows.HealthCheckWorkflow)
	w.RegisterWorkflow(workflows.CrawlWorkflow)
	w.RegisterWorkflow(workflows.HostWorkflow)
	w.RegisterWorkflow(workflows.ProcessPageWorkflow)
	w.RegisterWorkflow(workflows.CrawlProcessingWorkflow)
	w.RegisterWorkflow(workflows.DeliverWorkflow)
	w.RegisterActivity(health)
	w.RegisterActivity(frontier)
	if local != nil {
		w.RegisterActivity(local)
	}
	return w
}

// sdkDefaultSlots is the SDK's default number of workflow tasks, and of local activities, a
// worker runs at once (worker.Options).
const sdkDefaultSlots = 1000

// processName names this worker process in segment keys: host name and process id.
func processName() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s-%d", strings.NewReplacer("/", "_", "#", "_", " ", "_").Replace(host), os.Getpid())
}

// NewFrontier assembles the frontier's activities (claims, controls) over admission.
func NewFrontier(svc *admit.Service, cfg *config.Config, st *store.Store) *activities.Frontier {
	return &activities.Frontier{Store: st, Crawls: svc.Crawls, Admitter: svc.Admitter, ProcessQueue: cfg.ProcessTaskQueue,
		RenderQueue: cfg.RenderTaskQueue}
}

// Stop stops every worker, letting in-flight activities finish within the stop timeout;
// activities still running then are retried elsewhere by Temporal.
func (r *Runner) Stop() {
	r.once.Do(func() { close(r.stopping) })
	// At once: each waits up to the stop timeout for its activities, and the workflow role has
	// two workers.
	var stopping sync.WaitGroup
	for _, w := range r.workers {
		stopping.Go(w.Stop)
	}
	stopping.Wait()
	r.workers = nil
	r.unwatch()
	for _, c := range r.closers {
		c()
	}
	r.closers = nil
}

// deliverer sends the crawls' outputs (spec.outputs): webhooks through the address guard, open
// only to the networks the operator allows for deliveries; datasets to the bucket.
func deliverer(st *store.Store, b *blob.Store, texts *segment.Reader, cfg *config.Config) *deliver.Deliverer {
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: cfg.RootCAs, MinVersion: tls.VersionTLS12}}
	hook := deliver.NewWebhook(netguard.New(netguard.Options{Allow: cfg.DeliveryAllowNetworks}), tr, webhookTimeout, cfg.UserAgent)
	return &deliver.Deliverer{Store: deliver.StoreOf(st), Records: &export.Source{Store: st, Texts: texts}, Webhook: hook,
		Dataset: &deliver.Dataset{Blob: b}, Log: slog.Default()}
}

// webhookTimeout bounds one webhook request, its answer included.
const webhookTimeout = 30 * time.Second

// schedule is the process's booking of hosts' request time, per-IP politeness over dialer.
func schedule(st *store.Store, dialer *netguard.Dialer, cfg *config.Config) *pacing.Schedule {
	return &pacing.Schedule{Store: st.Schedule(), IP: pacing.IPLimit{Dialer: dialer, Gap: cfg.IPGap, Override: cfg.IPGapOverride}}
}
