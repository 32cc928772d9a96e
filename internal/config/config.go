// Package config owns Trawler's settings: one Config filled from defaults, then the
// environment (TRAWLER_* and the conventional TEMPORAL_ADDRESS, DATABASE_URL), then flags.
// Every setting is declared once in the table in settings.go, which also feeds the README's
// configuration table and the docker-compose consistency test.
package config

import (
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"net/netip"
	"os"
	"strings"
	"time"

	"github.com/trawlerdev/trawler/internal/content"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/render"
	"github.com/trawlerdev/trawler/internal/urlnorm"
)

// Config is every setting a Trawler process reads. Zero values are never used: Load fills
// each field from its setting's default first.
type Config struct {
	TemporalAddress   string
	TemporalNamespace string
	// TemporalCompression is the gRPC compression of requests to Temporal: none or gzip.
	TemporalCompression string
	// PayloadKey seals every payload and failure Trawler writes into Temporal (codec); "":
	// payloads go as plain JSON. Comma-separated: the first seals, all open (rotation).
	PayloadKey       string
	CodecAddr        string   // where `trawler codec-server` listens
	CodecOrigins     []string // browser origins (the Temporal UI's) allowed to call it
	TaskQueue        string
	IDPrefix         string
	FetchTaskQueue   string
	ProcessTaskQueue string
	RenderTaskQueue  string

	DatabaseURL string
	PGMaxConns  int // pool size per process

	S3Endpoint  string
	S3AccessKey string
	S3SecretKey string
	S3Bucket    string
	S3UseSSL    bool

	UserAgent     string
	Proxy         string // outbound proxy URL for crawls that name none ("": direct)
	ConnectTo     []ConnectRule
	AllowNetworks []netip.Prefix
	// DeliveryAllowNetworks opens the guard to webhooks (spec.outputs) on these networks only:
	// a receiver on loopback is the operator's choice, never a crawl author's.
	DeliveryAllowNetworks []netip.Prefix
	AllowPorts            []int          // ports crawled URLs may name
	CAFile                string         // extra trusted certificate authorities (PEM), beside the system's
	RootCAs               *x509.CertPool // the system's and CAFile's; nil: the system's
	SeenMode              string
	DropParams            []string
	DefaultPages          []string
	BloomExpected         uint
	HeartbeatMax          time.Duration
	LocalLease            time.Duration
	LocalLeaseConcurrency int
	IPGap                 time.Duration
	IPGapOverride         bool

	Roles              []string
	FetchConcurrency   int
	ProcessConcurrency int
	ProcessLeases      int
	SegmentMaxAge      time.Duration
	Retention          time.Duration // crawls that ended longer ago are deleted (0: never)
	SegmentMaxBytes    int
	SegmentCacheBytes  int
	BodyBudget         int64             // body bytes a process holds across its requests (0: no bound)
	ParseBudget        int64             // memory a process's page parsing may take at once (0: no bound)
	PDF                content.PDFLimits // how much of one PDF the process role reads
	Render             render.Options    // the render role's browser and budgets
	StartupWait        time.Duration     // a worker's wait for its services (a restart during an outage)
	ShutdownTimeout    time.Duration
	FetchRate          float64 // per worker, activities/s (0: no cap)
	FetchQueueRate     float64 // per task queue
	ProcessRate        float64
	ProcessQueueRate   float64
	WakeRate           float64       // hosts a process wakes per second when it admits links (0: no cap)
	WakeBacklog        time.Duration // no link admission wakes a host while the workflow queue's oldest task waited longer (0: off)

	MetricsAddr string // "" when off
	PProf       bool   // /debug/pprof/ next to /metrics
	APIAddr     string
	APIToken    string

	LogLevel  string
	LogFormat string
}

// Load builds a Config for a process: defaults, then getenv, then the flags in args.
// The flags are registered on fs (so -h lists them with their environment names).
// An invalid value fails with an error naming the setting, its source and the value.
func Load(fs *flag.FlagSet, args []string, getenv func(string) string) (*Config, error) {
	c := &Config{}
	for _, s := range settings {
		if err := s.set(c, s.Default); err != nil {
			return nil, fmt.Errorf("config: default of %s is invalid: %w", s.Env, err)
		}
	}
	var errs []error
	for _, s := range settings {
		v := getenv(s.Env)
		if file := getenv(s.Env + "_FILE"); s.Secret && file != "" && v == "" {
			// A secret may come from a file (a mounted Docker or Kubernetes secret), so it need
			// not sit in the environment or on a command line.
			raw, err := os.ReadFile(file)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s_FILE: %w", s.Env, err))
				continue
			}
			v = strings.TrimRight(string(raw), "\r\n")
		}
		if v != "" {
			if err := s.set(c, v); err != nil {
				errs = append(errs, fmt.Errorf("invalid %s=%q: %w", s.Env, redact(s, v), err))
			}
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("config: %w", errors.Join(errs...))
	}
	if fs != nil {
		for _, s := range settings {
			fs.Var(&flagValue{c: c, s: s}, s.Flag, fmt.Sprintf("%s (env %s, default %q)", s.Usage, s.Env, redact(s, s.Default)))
		}
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
	}
	if err := c.validate(); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return c, nil
}

// HasRole reports whether this process serves role (workflow, fetch or process).
func (c *Config) HasRole(role string) bool {
	for _, r := range c.Roles {
		if r == role {
			return true
		}
	}
	return false
}

func (c *Config) validate() error {
	var errs []error
	if c.FetchTaskQueue == c.TaskQueue || c.ProcessTaskQueue == c.TaskQueue || c.RenderTaskQueue == c.TaskQueue {
		errs = append(errs, errors.New("TRAWLER_FETCH_TASK_QUEUE, TRAWLER_PROCESS_TASK_QUEUE and TRAWLER_RENDER_TASK_QUEUE must differ from TRAWLER_TASK_QUEUE"))
	}
	if strings.TrimSpace(c.UserAgent) == "" {
		errs = append(errs, errors.New("TRAWLER_USER_AGENT must not be empty"))
	}
	return errors.Join(errs...)
}

// flagValue adapts a setting to flag.Value so a flag overrides env and default.
type flagValue struct {
	c *Config
	s setting
}

func (f *flagValue) String() string { return "" }

func (f *flagValue) Set(v string) error {
	if err := f.s.set(f.c, v); err != nil {
		return fmt.Errorf("invalid --%s %q: %w", f.s.Flag, redact(f.s, v), err)
	}
	return nil
}

func redact(s setting, v string) string {
	if s.Secret && v != "" {
		return "***"
	}
	return v
}

// Normalizer is the URL normalizer of this configuration (TRAWLER_DROP_PARAMS,
// TRAWLER_DEFAULT_PAGES): workers, the API, the CLI and the WARC tools spell URLs alike only
// through it.
func (c *Config) Normalizer() *urlnorm.Normalizer {
	return urlnorm.New(urlnorm.Options{DropParams: c.DropParams, DefaultPages: c.DefaultPages})
}

// TrustedProxy is the worker's own proxy as the fetch client compares proxies ("": none).
func (c *Config) TrustedProxy() string {
	if c.Proxy == "" {
		return ""
	}
	u, err := crawl.ParseProxy(c.Proxy) // (checked when the setting was read)
	if err != nil {
		return ""
	}
	return u.String()
}
