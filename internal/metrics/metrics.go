// Package metrics owns a process's Prometheus endpoint: the Temporal SDK's metrics (through
// its tally handler) and Trawler's own series, which activities and workflows emit through
// the same handler (activity.GetMetricsHandler, workflow.GetMetricsHandler), so one registry
// serves both. It also names Trawler's series, so emitters and the dashboard agree.
package metrics

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/pprof"
	"time"

	prom "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/uber-go/tally/v4"
	tallyprom "github.com/uber-go/tally/v4/prometheus"
	"go.temporal.io/sdk/client"
	sdktally "go.temporal.io/sdk/contrib/tally"

	"github.com/trawlerdev/trawler/internal/iostats"
	"github.com/trawlerdev/trawler/internal/listen"
	"github.com/trawlerdev/trawler/internal/membudget"
)

// Trawler's series, exposed under exactly these names (with the SDK's tags — namespace,
// task_queue, activity_type or workflow_type — added to the ones listed).
const (
	Fetches          = "trawler_fetches"           // counter; tag status_class: 2xx 3xx 4xx 5xx error (no answer)
	Refused          = "trawler_fetches_refused"   // counter: requests not sent, the address being forbidden (SSRF guard)
	FetchBytes       = "trawler_fetch_bytes"       // counter: body bytes kept
	FetchLatency     = "trawler_fetch_latency"     // histogram (seconds), request start to body read
	NotModified      = "trawler_not_modified"      // counter: 304 answers to conditional requests
	Retries          = "trawler_retries"           // counter: URL attempts that failed and were rescheduled
	DeadLetters      = "trawler_dead_letters"      // counter: URLs that failed for good
	RobotsFetches    = "trawler_robots_fetches"    // counter; tag outcome: rules allow_all unreachable redirect_refused
	RobotsBlocked    = "trawler_robots_blocked"    // counter: URLs robots.txt forbids
	RobotsOverridden = "trawler_robots_overridden" // counter: requests to hosts whose robots.txt a crawl's robotsOverride sets aside
	BodiesReused     = "trawler_bodies_reused"     // counter; tag from: recrawl crawl "earlier crawl": 2xx bodies not stored again, their digest being stored
	HostBackoffs     = "trawler_host_backoffs"     // counter: host workflows entering backoff
	Documents        = "trawler_documents"         // counter: pages processed and stored
	NotRead          = "trawler_content_not_read"  // counter; tag type (image, audio, video, font, application, text, other): bodies stored but not read
	Duplicates       = "trawler_duplicates"        // counter; tag kind: exact simhash minhash
	LinksAdmitted    = "trawler_links_admitted"    // counter: new URLs entering the frontier
	LinksSeen        = "trawler_links_seen"        // counter: links to URLs already known
	LinksRejected    = "trawler_links_rejected"    // counter; tag reason
	FrontierURLs     = "trawler_frontier_urls"     // gauge; tags crawl, state: queued claimed fetched
	Unstorable       = "trawler_unstorable"        // counter: fetch outcomes or documents Postgres refused for their values (that URL set aside)
	// What a crawl waits on (gauges; tag crawl): claims past their lease, seconds since the
	// oldest page awaiting processing was fetched, seconds the longest-due URL has waited.
	ExpiredClaims     = "trawler_expired_claims"
	OldestUnprocessed = "trawler_oldest_unprocessed_seconds"
	OldestDue         = "trawler_oldest_due_seconds"
	WARCRecords       = "trawler_warc_records" // counter
	WARCBytes         = "trawler_warc_bytes"   // counter
	// Deliveries (spec.outputs; tag kind: webhook dataset): records delivered, records in
	// batches dead-lettered, failed tries of a batch.
	Delivered        = "trawler_delivered_records"
	DeliveryDead     = "trawler_delivery_dead_records"
	DeliveryFailures = "trawler_delivery_failures"
	// What the process sent to its stores (counters, no SDK tags): S3 requests, and Postgres
	// round trips (a query, a pipelined batch or a copy each).
	S3Requests         = "trawler_s3_requests"
	PostgresRoundTrips = "trawler_postgres_round_trips"
	// A process's memory budgets (tag budget: body parse): bytes held now, and the takes
	// that waited for room (counter). A budget that waits often is too small for the work.
	BudgetHeld  = "trawler_memory_budget_held_bytes"
	BudgetWaits = "trawler_memory_budget_waits"
)

// Series lists every Trawler series name, for checks of the dashboard and the docs.
var Series = []string{Fetches, Refused, FetchBytes, FetchLatency, NotModified, Retries, DeadLetters, RobotsFetches,
	RobotsBlocked, HostBackoffs, Documents, NotRead, Duplicates, LinksAdmitted, LinksSeen, LinksRejected, FrontierURLs, Unstorable, ExpiredClaims,
	OldestUnprocessed, OldestDue, WARCRecords, WARCBytes, Delivered, DeliveryDead, DeliveryFailures, S3Requests, PostgresRoundTrips, BudgetHeld, BudgetWaits}

// Registry is a process's metrics: a tally scope reporting into a Prometheus registry.
type Registry struct {
	scope  tally.Scope
	closer io.Closer
	prom   *prom.Registry
}

// New creates the registry. Close it to stop reporting.
func New() (*Registry, error) {
	reg := prom.NewRegistry()
	reg.MustRegister(prom.NewGoCollector(), prom.NewProcessCollector(prom.ProcessCollectorOpts{}),
		prom.NewCounterFunc(prom.CounterOpts{Name: S3Requests, Help: "S3 requests sent by this process"},
			func() float64 { return float64(iostats.S3Requests()) }),
		prom.NewCounterFunc(prom.CounterOpts{Name: PostgresRoundTrips, Help: "Postgres round trips (queries, batches, copies) of this process"},
			func() float64 { return float64(iostats.PostgresRoundTrips()) }),
		budgets{})
	reporter := tallyprom.NewReporter(tallyprom.Options{
		Registerer:       reg,
		DefaultTimerType: tallyprom.HistogramTimerType,
		DefaultHistogramBuckets: tally.DurationBuckets{
			5 * time.Millisecond, 10 * time.Millisecond, 25 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond,
			250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2500 * time.Millisecond, 5 * time.Second,
			10 * time.Second, 30 * time.Second, time.Minute}.AsValues(),
		OnRegisterError: func(err error) { slog.Warn("metrics: registering a series failed", "error", err) },
	})
	scope, closer := tally.NewRootScope(tally.ScopeOptions{
		CachedReporter:  reporter,
		Separator:       tallyprom.DefaultSeparator,
		SanitizeOptions: &sdktally.PrometheusSanitizeOptions,
	}, time.Second)
	return &Registry{scope: scope, closer: closer, prom: reg}, nil
}

// Handler is what a Temporal client takes as client.Options.MetricsHandler.
func (r *Registry) Handler() client.MetricsHandler {
	return sdktally.NewMetricsHandler(r.scope)
}

// HTTPHandler serves the registry in Prometheus text format.
func (r *Registry) HTTPHandler() http.Handler {
	return promhttp.HandlerFor(r.prom, promhttp.HandlerOpts{})
}

// Close flushes and stops reporting.
func (r *Registry) Close() error { return r.closer.Close() }

// Serve listens on addr and serves /metrics (and with profiles, Go's /debug/pprof/) until
// ctx ends. It returns the bound address (addr may end in :0, or name a range of ports: the
// first free one is taken) once listening.
func (r *Registry) Serve(ctx context.Context, addr string, profiles bool) (string, error) {
	ln, err := listen.TCP(addr)
	if err != nil {
		return "", fmt.Errorf("metrics: listen on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", r.HTTPHandler())
	if profiles {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			slog.Error("metrics: server failed", "error", err)
		}
	}()
	return ln.Addr().String(), nil
}

// budgets reports the process's memory budgets (membudget.All), read at each scrape: they
// are made after the registry, by the roles that use them.
type budgets struct{}

var (
	budgetHeldDesc  = prom.NewDesc(BudgetHeld, "bytes held in a memory budget of this process", []string{"budget"}, nil)
	budgetWaitsDesc = prom.NewDesc(BudgetWaits, "takes from a memory budget that waited for room", []string{"budget"}, nil)
)

func (budgets) Describe(ch chan<- *prom.Desc) {
	ch <- budgetHeldDesc
	ch <- budgetWaitsDesc
}

func (budgets) Collect(ch chan<- prom.Metric) {
	// Summed by name: a process running several runners (the tests) has several of a name.
	held, waits := map[string]int64{}, map[string]int64{}
	for _, b := range membudget.All() {
		held[b.Name()] += b.Held()
		waits[b.Name()] += b.Waits()
	}
	for name := range held {
		ch <- prom.MustNewConstMetric(budgetHeldDesc, prom.GaugeValue, float64(held[name]), name)
		ch <- prom.MustNewConstMetric(budgetWaitsDesc, prom.CounterValue, float64(waits[name]), name)
	}
}
