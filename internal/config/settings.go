package config

import (
	"fmt"
	"strings"
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/urlnorm"
)

// setting declares one configuration value: its flag, environment name, default and parser.
type setting struct {
	Flag    string
	Env     string
	Default string
	Usage   string
	Secret  bool
	set     func(c *Config, v string) error
}

// Setting is the public, documentation view of a setting.
type Setting struct {
	Flag, Env, Default, Usage string
}

// Settings lists every setting in declaration order, secrets' defaults included (they are
// development credentials, the same ones scripts/stack.sh starts MinIO with).
func Settings() []Setting {
	out := make([]Setting, len(settings))
	for i, s := range settings {
		out[i] = Setting{Flag: s.Flag, Env: s.Env, Default: s.Default, Usage: s.Usage}
	}
	return out
}

var settings = []setting{
	{Flag: "temporal-address", Env: "TEMPORAL_ADDRESS", Default: "127.0.0.1:7233", Usage: "Temporal frontend host:port, or a comma-separated list of a cluster's frontends (calls are balanced over those that answer)",
		set: func(c *Config, v string) error { return hostPorts(&c.TemporalAddress, v) }},
	{Flag: "temporal-namespace", Env: "TEMPORAL_NAMESPACE", Default: "default", Usage: "Temporal namespace",
		set: func(c *Config, v string) error { return nonEmpty(&c.TemporalNamespace, v) }},
	{Flag: "temporal-compression", Env: "TRAWLER_TEMPORAL_COMPRESSION", Default: "none", Usage: "gRPC compression to Temporal: none (CPU matters more than bytes next to the server) or gzip (a slow or metered link, e.g. Temporal Cloud)",
		set: func(c *Config, v string) error { return oneOf(&c.TemporalCompression, v, "none", "gzip") }},
	{Flag: "task-queue", Env: "TRAWLER_TASK_QUEUE", Default: crawl.WorkflowQueue, Usage: "task queue for crawl workflows and their children; host workflows run on it with \"-hosts\" (trawler-hosts), polled by the same workers",
		set: func(c *Config, v string) error { return nonEmpty(&c.TaskQueue, v) }},
	{Flag: "fetch-task-queue", Env: "TRAWLER_FETCH_TASK_QUEUE", Default: crawl.FetchQueue, Usage: "task queue for fetch activities (I/O bound)",
		set: func(c *Config, v string) error { return nonEmpty(&c.FetchTaskQueue, v) }},
	{Flag: "process-task-queue", Env: "TRAWLER_PROCESS_TASK_QUEUE", Default: crawl.ProcessQueue, Usage: "task queue for page processing (CPU bound)",
		set: func(c *Config, v string) error { return nonEmpty(&c.ProcessTaskQueue, v) }},
	{Flag: "render-task-queue", Env: "TRAWLER_RENDER_TASK_QUEUE", Default: crawl.RenderQueue, Usage: "task queue for rendering pages in headless Chromium (the render role)",
		set: func(c *Config, v string) error { return nonEmpty(&c.RenderTaskQueue, v) }},
	{Flag: "database-url", Env: "DATABASE_URL", Default: "postgres://trawler@127.0.0.1:55432/trawler?sslmode=disable", Usage: "PostgreSQL connection URL; several hosts (postgres://u@h1:p,h2:p/db?target_session_attrs=read-write) follow a promoted standby", Secret: true,
		set: func(c *Config, v string) error { return prefixed(&c.DatabaseURL, v, "postgres://", "postgresql://") }},
	{Flag: "pg-max-conns", Env: "TRAWLER_PG_MAX_CONNS", Default: "4", Usage: "Postgres connections per process at most (a fetch worker holds one more, listening): N processes need N × (this + 1) of Postgres's max_connections",
		set: func(c *Config, v string) error { return positiveInt(&c.PGMaxConns, v) }},
	{Flag: "s3-endpoint", Env: "TRAWLER_S3_ENDPOINT", Default: "127.0.0.1:9000", Usage: "MinIO/S3 endpoint host:port, or a comma-separated list of a distributed MinIO's nodes (a process starts at a random node and moves on when one refuses; requests are signed for the first's name)",
		set: func(c *Config, v string) error { return hostPorts(&c.S3Endpoint, v) }},
	{Flag: "s3-access-key", Env: "TRAWLER_S3_ACCESS_KEY", Default: "trawler", Usage: "MinIO/S3 access key",
		set: func(c *Config, v string) error { return nonEmpty(&c.S3AccessKey, v) }},
	{Flag: "s3-secret-key", Env: "TRAWLER_S3_SECRET_KEY", Default: "trawler-dev-secret", Usage: "MinIO/S3 secret key", Secret: true,
		set: func(c *Config, v string) error { return nonEmpty(&c.S3SecretKey, v) }},
	{Flag: "s3-bucket", Env: "TRAWLER_S3_BUCKET", Default: "trawler", Usage: "bucket for bodies, text and WARC files (created at start)",
		set: func(c *Config, v string) error { return bucketName(&c.S3Bucket, v) }},
	{Flag: "s3-ssl", Env: "TRAWLER_S3_SSL", Default: "false", Usage: "use HTTPS to reach MinIO/S3",
		set: func(c *Config, v string) error { return boolean(&c.S3UseSSL, v) }},
	{Flag: "id-prefix", Env: "TRAWLER_ID_PREFIX", Default: "", Usage: "prefix of every workflow ID (host/…, crawl/…), so several deployments can share a Temporal namespace",
		set: func(c *Config, v string) error {
			if strings.ContainsAny(v, " \t\n") {
				return fmt.Errorf("must not contain white space")
			}
			c.IDPrefix = v
			return nil
		}},
	{Flag: "user-agent", Env: "TRAWLER_USER_AGENT", Default: "TrawlerBot/0.1 (+https://github.com/trawlerdev/trawler)", Usage: "User-Agent sent with every request; its first token is the robots.txt product token",
		set: func(c *Config, v string) error { return nonEmpty(&c.UserAgent, v) }},
	{Flag: "proxy", Env: "TRAWLER_PROXY", Default: "", Secret: true, Usage: "outbound proxy for every crawl that names none: http://, https:// or socks5://[user:pass@]host:port (default: direct)",
		set: func(c *Config, v string) error {
			if v == "" {
				c.Proxy = ""
				return nil
			}
			if _, err := crawl.ParseProxy(v); err != nil {
				return err
			}
			c.Proxy = v
			return nil
		}},
	{Flag: "connect-to", Env: "TRAWLER_CONNECT_TO", Default: "", Usage: "dial overrides PATTERN=HOST:PORT[,...] like curl --connect-to, e.g. '*.test=127.0.0.1:18080'; also opts those targets out of the private-address guard",
		set: func(c *Config, v string) error {
			rules, err := ParseConnectTo(v)
			c.ConnectTo = rules
			return err
		}},
	{Flag: "allow-networks", Env: "TRAWLER_ALLOW_NETWORKS", Default: "", Usage: "CIDRs the private-address guard lets through anyway, e.g. '10.1.0.0/16' (default: none)",
		set: func(c *Config, v string) error { return prefixes(&c.AllowNetworks, v) }},
	{Flag: "delivery-allow-networks", Env: "TRAWLER_DELIVERY_ALLOW_NETWORKS", Default: "", Usage: "CIDRs a crawl's webhooks (spec.outputs) may be sent to although the private-address guard refuses them, e.g. '127.0.0.1/32' for a receiver on this machine (default: none)",
		set: func(c *Config, v string) error { return prefixes(&c.DeliveryAllowNetworks, v) }},
	{Flag: "allow-ports", Env: "TRAWLER_ALLOW_PORTS", Default: "80,443", Usage: "ports crawled URLs may name (a URL with another port is refused at admission: services on odd ports are no pages)",
		set: func(c *Config, v string) error { return ports(&c.AllowPorts, v) }},
	{Flag: "ca-file", Env: "TRAWLER_CA_FILE", Default: "", Usage: "PEM file of certificate authorities https:// answers may be signed by, besides the system's (a corporate or test CA)",
		set: func(c *Config, v string) error { return rootCAs(c, v) }},
	{Flag: "ip-gap", Env: "TRAWLER_IP_GAP", Default: "50ms", Usage: "minimum gap between request starts to one IP address, across all its hosts (shared hosting); 0 turns the per-IP limit off",
		set: func(c *Config, v string) error { return duration(&c.IPGap, v) }},
	{Flag: "ip-gap-connect-to", Env: "TRAWLER_IP_GAP_CONNECT_TO", Default: "false", Usage: "apply the per-IP limit to connect-to targets too (off: a test web serving thousands of hosts from one address is not throttled as one site)",
		set: func(c *Config, v string) error { return boolean(&c.IPGapOverride, v) }},
	{Flag: "drop-params", Env: "TRAWLER_DROP_PARAMS", Default: strings.Join(urlnorm.Default().DropParams, ","), Usage: "query parameters removed when normalizing URLs (a trailing * matches a prefix)",
		set: func(c *Config, v string) error { c.DropParams = list(v); return nil }},
	{Flag: "default-pages", Env: "TRAWLER_DEFAULT_PAGES", Default: "", Usage: "final path segments treated as their directory when normalizing, e.g. 'index.html,index.php' (off by default: many sites serve different pages there)",
		set: func(c *Config, v string) error { c.DefaultPages = list(v); return nil }},
	{Flag: "seen-mode", Env: "TRAWLER_SEEN_MODE", Default: "exact", Usage: "exact: every discovered link is checked in Postgres; approximate: links the per-worker Bloom filter has seen skip Postgres (a false positive loses a link)",
		set: func(c *Config, v string) error { return oneOf(&c.SeenMode, v, "exact", "approximate") }},
	{Flag: "bloom-expected", Env: "TRAWLER_BLOOM_EXPECTED", Default: "10000000", Usage: "URLs the per-worker Bloom filter is sized for (at a 1e-6 false-positive rate)",
		set: func(c *Config, v string) error {
			var n int
			err := positiveInt(&n, v)
			c.BloomExpected = uint(n)
			return err
		}},
	{Flag: "heartbeat-max", Env: "TRAWLER_HEARTBEAT_MAX", Default: "10s", Usage: "the SDK's heartbeat throttle: an activity's heartbeats reach Temporal at most this often. A fetch lease beats every 20 s, and a pause or throttle of its host, told to it through Postgres, stops it within about a second (the fetch worker throttles at 1 s at most)",
		set: func(c *Config, v string) error { return duration(&c.HeartbeatMax, v) }},
	{Flag: "local-lease", Env: "TRAWLER_LOCAL_LEASE", Default: "0", Usage: "how long a host run's first fetch lease may claim URLs when it runs as a local activity in the workflow worker, e.g. 10s (a small host's whole run is then one workflow task: about half the history events and server writes of an activity lease); a pause, a throttle or a status query reaches such a lease's host when it ends. At most 10s (a third of a host's workflow task timeout); 0 (the default): every lease runs on the fetch queue",
		set: func(c *Config, v string) error { return localLease(&c.LocalLease, v) }},
	{Flag: "local-lease-concurrency", Env: "TRAWLER_LOCAL_LEASE_CONCURRENCY", Default: "1000", Usage: "local leases (a host run's first lease, TRAWLER_LOCAL_LEASE) one workflow worker runs at once; a host run that finds none free runs its lease on the fetch queue. Each holds its host's workflow task while it runs: the worker's workflow-task and local-activity slots are this many on top of the SDK's 1000 each. The fetch role's concurrency and rate limits do not reach local leases",
		set: func(c *Config, v string) error { return positiveInt(&c.LocalLeaseConcurrency, v) }},
	{Flag: "roles", Env: "TRAWLER_ROLES", Default: "workflow,fetch,process", Usage: "worker roles to serve: any of workflow, fetch, process, render (render needs Chromium)",
		set: func(c *Config, v string) error { return roles(&c.Roles, v) }},
	{Flag: "fetch-concurrency", Env: "TRAWLER_FETCH_CONCURRENCY", Default: "1000", Usage: "concurrent fetch activities (host leases) per worker process",
		set: func(c *Config, v string) error { return positiveInt(&c.FetchConcurrency, v) }},
	{Flag: "process-concurrency", Env: "TRAWLER_PROCESS_CONCURRENCY", Default: "8", Usage: "pages batches processed at once per worker process (CPU bound)",
		set: func(c *Config, v string) error { return positiveInt(&c.ProcessConcurrency, v) }},
	{Flag: "process-leases", Env: "TRAWLER_PROCESS_LEASES", Default: "1000", Usage: "long processing activities one process worker holds at once: two per running crawl (they wait between batches of pages; process-concurrency bounds the work)",
		set: func(c *Config, v string) error { return positiveInt(&c.ProcessLeases, v) }},
	{Flag: "segment-max-age", Env: "TRAWLER_SEGMENT_MAX_AGE", Default: "1s", Usage: "longest a fetched body or extracted text waits for its segment (one stored object for all of a worker's pages meanwhile) to be written",
		set: func(c *Config, v string) error { return duration(&c.SegmentMaxAge, v) }},
	{Flag: "retention", Env: "TRAWLER_RETENTION", Default: "0", Usage: "process workers delete, at start and then every hour, each crawl that ended (done or stopped) longer ago than this — its rows, segments and WARC files, never bodies a later crawl reuses (at least 1h, e.g. 720h; 0: keep every crawl)",
		set: func(c *Config, v string) error { return retention(&c.Retention, v) }},
	{Flag: "segment-max-bytes", Env: "TRAWLER_SEGMENT_MAX_BYTES", Default: "8388608", Usage: "a segment is written once it holds this many bytes",
		set: func(c *Config, v string) error { return positiveInt(&c.SegmentMaxBytes, v) }},
	{Flag: "segment-cache-bytes", Env: "TRAWLER_SEGMENT_CACHE_BYTES", Default: "134217728", Usage: "segments a process worker keeps in memory, so the pages of one segment cost one GET",
		set: func(c *Config, v string) error { return positiveInt(&c.SegmentCacheBytes, v) }},
	{Flag: "body-budget", Env: "TRAWLER_BODY_BUDGET", Default: "512MiB", Usage: "response body bytes a worker process holds at once across its fetches and renders, decoders' windows included: a request waits for room (before it is sent, or as its body grows) rather than fail; one request may overdraw it by up to its body cap and decoder window (0: no bound)",
		set: func(c *Config, v string) error { return byteSize(&c.BodyBudget, v) }},
	{Flag: "parse-budget", Env: "TRAWLER_PARSE_BUDGET", Default: "1GiB", Usage: "memory a process worker's page parsing may take at once, reckoned at 40 bytes a body byte (a 10 MiB page may take 400 MiB to parse): a page waits for room, a page larger than the budget parses alone (0: no bound)",
		set: func(c *Config, v string) error { return byteSize(&c.ParseBudget, v) }},
	{Flag: "pdf-max-pages", Env: "TRAWLER_PDF_MAX_PAGES", Default: "200", Usage: "pages of a PDF read for text and links (the first ones)",
		set: func(c *Config, v string) error { return positiveInt(&c.PDF.Pages, v) }},
	{Flag: "pdf-timeout", Env: "TRAWLER_PDF_TIMEOUT", Default: "20s", Usage: "wall-clock time a PDF reader process (pdftotext, pdfinfo) may take before that PDF fails",
		set: func(c *Config, v string) error {
			if err := duration(&c.PDF.Timeout, v); err != nil || c.PDF.Timeout < time.Second {
				return fmt.Errorf("want a duration of at least 1s")
			}
			return nil
		}},
	{Flag: "require-isolation", Env: "TRAWLER_REQUIRE_ISOLATION", Default: "false", Usage: "refuse to read PDFs or render pages where their processes cannot have a network namespace of their own (otherwise they run on the worker's network, held off it by resource limits and Chromium's flags; trawler check reports which)",
		set: func(c *Config, v string) error {
			err := boolean(&c.PDF.RequireIsolation, v)
			c.Render.RequireIsolation = c.PDF.RequireIsolation
			return err
		}},
	{Flag: "pdf-memory-mb", Env: "TRAWLER_PDF_MEMORY_MB", Default: "512", Usage: "address space of a PDF reader process, MiB (a compression bomb fails that PDF, not the worker)",
		set: func(c *Config, v string) error { return positiveInt(&c.PDF.MemoryMB, v) }},
	{Flag: "chromium", Env: "TRAWLER_CHROMIUM", Default: "", Usage: "the Chromium binary of the render role (default: chromium, chromium-browser or google-chrome on PATH)",
		set: func(c *Config, v string) error { c.Render.ExecPath = v; return nil }},
	{Flag: "render-concurrency", Env: "TRAWLER_RENDER_CONCURRENCY", Default: "2", Usage: "pages a render worker renders at once (a Chromium tab each)",
		set: func(c *Config, v string) error { return positiveInt(&c.Render.Concurrency, v) }},
	{Flag: "render-timeout", Env: "TRAWLER_RENDER_TIMEOUT", Default: "20s", Usage: "time a page may take to render, from navigation to its DOM (its subresources' polite waits included)",
		set: func(c *Config, v string) error { return duration(&c.Render.PageTimeout, v) }},
	{Flag: "render-settle", Env: "TRAWLER_RENDER_SETTLE", Default: "500ms", Usage: "time given to a page's late scripts (timers, fetches) after its load event",
		set: func(c *Config, v string) error { return duration(&c.Render.Settle, v) }},
	{Flag: "render-max-bytes", Env: "TRAWLER_RENDER_MAX_BYTES", Default: "10485760", Usage: "bytes of subresources one page may load while it renders",
		set: func(c *Config, v string) error {
			n := 0
			err := positiveInt(&n, v)
			c.Render.MaxBytes = int64(n)
			return err
		}},
	{Flag: "render-max-requests", Env: "TRAWLER_RENDER_MAX_REQUESTS", Default: "200", Usage: "requests one page may make while it renders, besides its own document (more are blocked)",
		set: func(c *Config, v string) error { return positiveInt(&c.Render.MaxRequests, v) }},
	{Flag: "render-user", Env: "TRAWLER_RENDER_USER", Default: "nobody", Usage: "the unprivileged user Chromium runs as when the worker is root (its sandbox will not start as root)",
		set: func(c *Config, v string) error { return nonEmpty(&c.Render.User, v) }},
	{Flag: "render-memory-mb", Env: "TRAWLER_RENDER_MEMORY_MB", Default: "512", Usage: "memory of a rendered page, MiB: its JavaScript heap, and the resident set of each browser process (killed past it)",
		set: func(c *Config, v string) error { return positiveInt(&c.Render.MemoryMB, v) }},
	{Flag: "wake-rate", Env: "TRAWLER_WAKE_RATE", Default: "50", Usage: "host workflows this worker wakes per second at most when it admits links to their hosts (0: no cap); the others keep their URLs queued for the crawl's sweep",
		set: func(c *Config, v string) error { return nonNegativeFloat(&c.WakeRate, v) }},
	{Flag: "wake-backlog", Env: "TRAWLER_WAKE_BACKLOG", Default: "2s", Usage: "link admissions and the crawl's sweep start no host workflow while the hosts' workflow task queue's oldest task has waited longer than this (Temporal is behind); 0: never hold back",
		set: func(c *Config, v string) error { return duration(&c.WakeBacklog, v) }},
	{Flag: "fetch-rate", Env: "TRAWLER_FETCH_RATE", Default: "0", Usage: "fetch activities started per second by this worker at most (0: no cap)",
		set: func(c *Config, v string) error { return nonNegativeFloat(&c.FetchRate, v) }},
	{Flag: "fetch-queue-rate", Env: "TRAWLER_FETCH_QUEUE_RATE", Default: "0", Usage: "fetch activities started per second on the fetch task queue by all workers together (0: no cap; the server enforces it)",
		set: func(c *Config, v string) error { return nonNegativeFloat(&c.FetchQueueRate, v) }},
	{Flag: "process-rate", Env: "TRAWLER_PROCESS_RATE", Default: "0", Usage: "processing activities started per second by this worker at most (0: no cap)",
		set: func(c *Config, v string) error { return nonNegativeFloat(&c.ProcessRate, v) }},
	{Flag: "process-queue-rate", Env: "TRAWLER_PROCESS_QUEUE_RATE", Default: "0", Usage: "processing activities started per second on the process task queue by all workers together (0: no cap)",
		set: func(c *Config, v string) error { return nonNegativeFloat(&c.ProcessQueueRate, v) }},
	{Flag: "metrics-addr", Env: "TRAWLER_METRICS_ADDR", Default: "127.0.0.1:9464-9479", Usage: "where a worker serves Prometheus metrics (/metrics): host:port, or host:first-last for the first free port of a range (several workers on one machine), host:0 for any free port; off disables",
		set: func(c *Config, v string) error { return listenAddr(&c.MetricsAddr, v) }},
	{Flag: "pprof", Env: "TRAWLER_PPROF", Default: "false", Usage: "also serve Go's profiles (/debug/pprof/) on the metrics address; they expose internals, so not on an open network",
		set: func(c *Config, v string) error { return boolean(&c.PProf, v) }},
	{Flag: "payload-key", Env: "TRAWLER_PAYLOAD_KEY", Default: "", Secret: true, Usage: "seal every payload and failure Trawler writes into Temporal with AES-256-GCM under this key (16+ characters; comma-separated: the first seals, all open); every worker and client of the deployment needs it (off: plain JSON)",
		set: func(c *Config, v string) error { return payloadKey(&c.PayloadKey, v) }},
	{Flag: "codec-addr", Env: "TRAWLER_CODEC_ADDR", Default: "127.0.0.1:8089", Usage: "where `trawler codec-server` decodes payloads for the Temporal UI and the temporal CLI (--codec-endpoint)",
		set: func(c *Config, v string) error { return listenAddr(&c.CodecAddr, v) }},
	{Flag: "codec-origins", Env: "TRAWLER_CODEC_ORIGINS", Default: "http://127.0.0.1:8233,http://localhost:8233", Usage: "browser origins (the Temporal UI's) allowed to call the codec server",
		set: func(c *Config, v string) error { c.CodecOrigins = list(v); return nil }},
	{Flag: "api-addr", Env: "TRAWLER_API_ADDR", Default: "127.0.0.1:8080", Usage: "where `trawler serve` listens for the HTTP API",
		set: func(c *Config, v string) error { return listenAddr(&c.APIAddr, v) }},
	{Flag: "api-token", Env: "TRAWLER_API_TOKEN", Default: "", Usage: "when set, the HTTP API requires `Authorization: Bearer <token>`", Secret: true,
		set: func(c *Config, v string) error { c.APIToken = v; return nil }},
	{Flag: "startup-wait", Env: "TRAWLER_STARTUP_WAIT", Default: "5m", Usage: "how long a starting worker waits for Postgres, MinIO and Temporal to answer before it gives up (0: one try)",
		set: func(c *Config, v string) error { return duration(&c.StartupWait, v) }},
	{Flag: "shutdown-timeout", Env: "TRAWLER_SHUTDOWN_TIMEOUT", Default: "30s", Usage: "how long a stopping worker lets in-flight activities finish",
		set: func(c *Config, v string) error { return duration(&c.ShutdownTimeout, v) }},
	{Flag: "log-level", Env: "TRAWLER_LOG_LEVEL", Default: "info", Usage: "debug, info, warn or error",
		set: func(c *Config, v string) error { return oneOf(&c.LogLevel, v, "debug", "info", "warn", "error") }},
	{Flag: "log-format", Env: "TRAWLER_LOG_FORMAT", Default: "text", Usage: "text or json",
		set: func(c *Config, v string) error { return oneOf(&c.LogFormat, v, "text", "json") }},
}
