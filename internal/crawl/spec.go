// Package crawl holds the plain-JSON contracts shared by workflows, activities and the CLI: a
// crawl's spec, the host workflow's input and state, signal payloads and query answers, and
// the names the temporal CLI uses for them.
package crawl

import (
	"time"
)

// Politeness keys: what one schedule of request starts paces (Spec.PolitenessKey).
const (
	PolitenessHost   = "host"
	PolitenessDomain = "domain"
)

// Scopes: which discovered links a crawl follows.
const (
	ScopeHost   = "host"   // the seeds' hosts only
	ScopeDomain = "domain" // the seeds' registrable domains (public-suffix aware)
	ScopeList   = "list"   // the domains in AllowDomains (and their subdomains)
	ScopeAny    = "any"    // everything
)

// Spec is a crawl's definition: the JSON input of CrawlWorkflow. Zero fields take the
// defaults of WithDefaults.
type Spec struct {
	Name         string   `json:"name,omitempty"`
	Seeds        []string `json:"seeds"`
	Scope        string   `json:"scope,omitempty"`
	AllowDomains []string `json:"allowDomains,omitempty"`
	DenyHosts    []string `json:"denyHosts,omitempty"` // never crawled: "example.com" (and its subdomains)
	// RobotsOverride names hosts (and their subdomains) whose robots.txt the crawl does not
	// obey: the operator's own sites. Still paced by the crawl's delay; every such request is
	// counted (trawler_robots_overridden) and each lease logs it. Off unless hosts are named.
	RobotsOverride []string `json:"robotsOverride,omitempty"`
	DenyPatterns   []string `json:"denyPatterns,omitempty"` // Go regexps; a matching normalized URL is refused
	// AllowPatterns are Go regexps on the normalized URL: when any are given, a discovered URL
	// (link, redirect, sitemap entry, feed item, rendered link) must match one. Seeds are
	// always crawled.
	AllowPatterns   []string `json:"allowPatterns,omitempty"`
	MaxPages        int      `json:"maxPages,omitempty"`        // admitted URLs; 0 = unlimited
	MaxDepth        int      `json:"maxDepth,omitempty"`        // link hops from a seed
	MaxPagesPerHost int      `json:"maxPagesPerHost,omitempty"` // 0 = unlimited
	// MaxHosts caps the hosts the crawl takes URLs of (0: no cap): a site with wildcard
	// subdomains costs a host workflow each. URLs of hosts past it are skipped as "maxHosts".
	MaxHosts    int `json:"maxHosts,omitempty"`
	MaxOutlinks int `json:"maxOutlinks,omitempty"` // links followed per page
	// Budgets: the crawl stops (as by the stop signal, its reason in its progress) once it has
	// run this long since it started, paused time included, or fetched this many body bytes.
	MaxDuration Duration `json:"maxDuration,omitempty"`
	MaxBytes    int64    `json:"maxBytes,omitempty"`

	Delay         Duration `json:"delay,omitempty"`         // between request starts on a host
	MaxCrawlDelay Duration `json:"maxCrawlDelay,omitempty"` // a host asking more (robots.txt Crawl-delay) is skipped, never fetched faster
	Concurrency   int      `json:"concurrency,omitempty"`   // requests in flight per host
	// PolitenessKey is what one schedule of request starts paces: each "host" (the default), or
	// each registrable "domain", for sites that spread one server over many subdomains
	// (a.example.com and b.example.com then keep one delay between them).
	PolitenessKey string `json:"politenessKey,omitempty"`
	// AutoThrottle (k, 0: off) raises a host's gap to k × its recent response time, as
	// Scrapy's AutoThrottle and Heritrix's delay factor do: a struggling server gets room
	// before it fails. Never below Delay (nor robots.txt's Crawl-delay), never above
	// MaxCrawlDelay; it falls again as the server recovers.
	AutoThrottle float64 `json:"autoThrottle,omitempty"`
	// Throttle is set by the crawl's throttle signal (never by its author): a slower pacing
	// for all its hosts at once, on top of Delay and Concurrency, until a reset.
	Throttle  *Throttle `json:"throttle,omitempty"`
	UserAgent string    `json:"userAgent,omitempty"` // default: the worker's TRAWLER_USER_AGENT
	// Headers are sent with every request of the crawl (pages, robots.txt, sitemaps, a rendered
	// page's subresources), e.g. Accept-Language or an API key. Headers Trawler sets itself or
	// that belong to a connection are refused (CheckHeader).
	Headers map[string]string `json:"headers,omitempty"`
	// RecordSecretHeaders keeps, in WARC request records and stored request heads, the values
	// of the spec's headers and of Authorization and Cookie as sent; by default they read
	// "[redacted]", so an archive shared (--wacz) carries no API key or session.
	RecordSecretHeaders bool `json:"recordSecretHeaders,omitempty"`
	// Cookies keeps the cookies each host sets (RFC 6265) and sends them back to it: a jar
	// per crawl and host, kept in Postgres so it survives a worker's death and follows the host
	// to any worker, capped, never sent to another host. Off by default.
	Cookies bool `json:"cookies,omitempty"`
	// Proxy is the outbound proxy every request of the crawl goes through, robots.txt's
	// included (http://, https:// or socks5:// URL; "": the worker's TRAWLER_PROXY, or direct).
	// The address guard still judges each target host.
	Proxy          string   `json:"proxy,omitempty"`
	RequestTimeout Duration `json:"requestTimeout,omitempty"`
	MaxBodyBytes   int64    `json:"maxBodyBytes,omitempty"`
	MaxAttempts    int      `json:"maxAttempts,omitempty"` // tries before a URL is dead-lettered
	RetryBase      Duration `json:"retryBase,omitempty"`   // first retry delay; doubles each time

	BatchWindow      Duration `json:"batchWindow,omitempty"` // host time one claim of a fetch lease covers (window ÷ delay URLs)
	FetchLease       Duration `json:"fetchLease,omitempty"`  // how long one fetch activity holds its host at most
	MaxBatch         int      `json:"maxBatch,omitempty"`    // URLs per fetch activity at most
	HostIdleTimeout  Duration `json:"hostIdleTimeout,omitempty"`
	RetireAfter      Duration `json:"retireAfter,omitempty"` // a host failing for good this long is retired
	ProgressInterval Duration `json:"progressInterval,omitempty"`

	Recrawl Recrawl `json:"recrawl,omitempty"`
	Traps   Traps   `json:"traps,omitempty"`
	NearDup NearDup `json:"nearDup,omitempty"`
	// Render asks for the pages of some hosts or URL patterns to be rendered in headless
	// Chromium (the render worker role) after they are fetched: their scripts run, and the
	// links of the rendered DOM are admitted too.
	Render *Render `json:"render,omitempty"`
	// Requisites: the files a browser fetches to show a page, archived with it (requisites.go).
	Requisites *Requisites `json:"requisites,omitempty"`
	// Extract names fields to extract from pages (ExtractRule): stored with each document,
	// exported with it.
	Extract []ExtractRule `json:"extract,omitempty"`
	// Outputs deliver the crawl's documents while it runs (Output): webhooks and Parquet
	// datasets in the bucket.
	Outputs []Output `json:"outputs,omitempty"`
	WARC    WARC     `json:"warc,omitempty"`
	// DedupAgainst names earlier crawls whose stored bodies this crawl reuses ("*": every
	// crawl's, through the store-wide payload index): a body one of them, or this crawl,
	// already stored is not stored again, and its capture is written to WARC as a revisit
	// (identical-payload-digest) of the first. Without it a crawl still reuses the body of an
	// unchanged recrawl. Costs one Postgres round trip per new body.
	DedupAgainst []string `json:"dedupAgainst,omitempty"`

	unknown []UnknownField // fields its JSON named that Spec does not know (fields.go)
}

// Defaults of the spec's pacing fields, which a HostConfig carries too.
const (
	defaultDelay          = time.Second
	defaultMaxCrawlDelay  = 24 * time.Hour
	defaultConcurrency    = 1
	defaultRequestTimeout = 30 * time.Second
	defaultBatchWindow    = 30 * time.Second
	defaultFetchLease     = 5 * time.Minute
	defaultMaxBatch       = 50
	defaultIdleTimeout    = 5 * time.Minute
)

// setDefault sets d to v when it is unset.
func setDefault[T comparable](d *T, v T) {
	var zero T
	if *d == zero {
		*d = v
	}
}

// WithDefaults fills unset fields.
func (s Spec) WithDefaults() Spec {
	setDefault(&s.Scope, ScopeDomain)
	setDefault(&s.MaxDepth, 20)
	setDefault(&s.MaxOutlinks, 500)
	setDefault(&s.Delay, Duration(defaultDelay))
	setDefault(&s.MaxCrawlDelay, Duration(defaultMaxCrawlDelay))
	setDefault(&s.Concurrency, defaultConcurrency)
	setDefault(&s.RequestTimeout, Duration(defaultRequestTimeout))
	setDefault(&s.MaxBodyBytes, 10<<20)
	setDefault(&s.MaxAttempts, 4)
	setDefault(&s.RetryBase, Duration(30*time.Second))
	setDefault(&s.BatchWindow, Duration(defaultBatchWindow))
	setDefault(&s.FetchLease, Duration(defaultFetchLease))
	setDefault(&s.MaxBatch, defaultMaxBatch)
	setDefault(&s.HostIdleTimeout, Duration(defaultIdleTimeout))
	setDefault(&s.RetireAfter, Duration(7*24*time.Hour))
	setDefault(&s.ProgressInterval, Duration(5*time.Second))
	s.Recrawl = s.Recrawl.withDefaults()
	setDefault(&s.NearDup.SimHashBits, 3)
	setDefault(&s.NearDup.MinHashJaccard, 0.9)
	setDefault(&s.WARC.MaxBytes, 1<<30)
	setDefault(&s.WARC.MaxAge, Duration(10*time.Minute))
	if s.Requisites == nil {
		s.Requisites = &Requisites{}
	}
	return s
}
