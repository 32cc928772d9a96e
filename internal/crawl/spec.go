// Package crawl holds the plain-JSON contracts shared by workflows, activities and the CLI: a
// crawl's spec, the host workflow's input and state, signal payloads and query answers, and
// the names the temporal CLI uses for them.
package crawl

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"time"

	"golang.org/x/net/publicsuffix"
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
	WARC    WARC          `json:"warc,omitempty"`
	// DedupAgainst names earlier crawls whose stored bodies this crawl reuses ("*": every
	// crawl's, through the store-wide payload index): a body one of them, or this crawl,
	// already stored is not stored again, and its capture is written to WARC as a revisit
	// (identical-payload-digest) of the first. Without it a crawl still reuses the body of an
	// unchanged recrawl. Costs one Postgres round trip per new body.
	DedupAgainst []string `json:"dedupAgainst,omitempty"`

	unknown []UnknownField // fields its JSON named that Spec does not know (fields.go)
}

// Render names the pages a crawl renders: those of Hosts (and their subdomains), and those
// whose normalized URL matches one of Patterns (Go regexps).
type Render struct {
	Hosts    []string `json:"hosts,omitempty"`
	Patterns []string `json:"patterns,omitempty"`
}

// NearDup configures near-duplicate detection (exact duplicates are always marked).
type NearDup struct {
	Off            bool    `json:"off,omitempty"`
	SimHashBits    int     `json:"simhashBits,omitempty"`    // SimHash match: at most this many bits apart (1–3, default 3)
	MinHashJaccard float64 `json:"minhashJaccard,omitempty"` // MinHash match: estimated Jaccard at least this (default 0.9)
}

// WARC configures the crawl's WARC output.
type WARC struct {
	Off      bool     `json:"off,omitempty"`
	MaxBytes int64    `json:"maxBytes,omitempty"` // a file is closed once it reaches this size (default 1 GB)
	MaxAge   Duration `json:"maxAge,omitempty"`   // records wait at most this long for a file to fill (default 10m)
}

// Traps are the trap rules applied to discovered links; zero fields take generous defaults
// (16 path segments, a segment at most 3 times, dates within 3 years of today).
type Traps struct {
	MaxPathDepth      int `json:"maxPathDepth,omitempty"`
	MaxSegmentRepeats int `json:"maxSegmentRepeats,omitempty"`
	CalendarYears     int `json:"calendarYears,omitempty"`
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

// Validate reports every problem with a spec (after WithDefaults), naming the field.
func (s Spec) Validate() error {
	var errs []error
	if len(s.Seeds) == 0 {
		errs = append(errs, errors.New("seeds: at least one seed URL is required"))
	}
	switch s.Scope {
	case ScopeHost, ScopeDomain, ScopeAny:
	case ScopeList:
		if len(s.AllowDomains) == 0 {
			errs = append(errs, errors.New("allowDomains: scope \"list\" needs at least one domain"))
		}
	default:
		errs = append(errs, fmt.Errorf("scope: %q is not host, domain, list or any", s.Scope))
	}
	for _, p := range s.DenyPatterns {
		if _, err := regexp.Compile(p); err != nil {
			errs = append(errs, fmt.Errorf("denyPatterns: %q: %v", p, err))
		}
	}
	for _, h := range s.RobotsOverride {
		h = strings.ToLower(strings.TrimPrefix(strings.TrimSpace(h), "*."))
		switch suffix, _ := publicsuffix.PublicSuffix(h); {
		case h == "" || strings.ContainsAny(h, "/ :@"):
			errs = append(errs, fmt.Errorf("robotsOverride: %q is not a host name", h))
		case suffix == h:
			errs = append(errs, fmt.Errorf("robotsOverride: %q is a public suffix: name your own hosts", h))
		}
	}
	for _, p := range s.AllowPatterns {
		if _, err := regexp.Compile(p); err != nil {
			errs = append(errs, fmt.Errorf("allowPatterns: %q: %v", p, err))
		}
	}
	names := make([]string, 0, len(s.Headers))
	for name := range s.Headers {
		names = append(names, name)
	}
	sort.Strings(names)
	canonical := map[string]string{}
	for _, name := range names {
		value := s.Headers[name]
		if IsSecretRef(value) {
			// Named, not given: the worker checks the value it resolves (ResolvedHeader).
			if err := CheckSecretRef(value); err != nil {
				errs = append(errs, fmt.Errorf("headers: %s: %w", name, err))
			}
			value = ""
		}
		if err := CheckHeader(name, value); err != nil {
			errs = append(errs, fmt.Errorf("headers: %w", err))
		}
		if other, ok := canonical[strings.ToLower(name)]; ok {
			errs = append(errs, fmt.Errorf("headers: %q and %q name one header", other, name))
		}
		canonical[strings.ToLower(name)] = name
	}
	if r := s.Render; r != nil {
		if len(r.Hosts) == 0 && len(r.Patterns) == 0 {
			errs = append(errs, errors.New("render: name hosts or patterns"))
		}
		for _, p := range r.Patterns {
			if _, err := regexp.Compile(p); err != nil {
				errs = append(errs, fmt.Errorf("render.patterns: %q: %v", p, err))
			}
		}
		for _, h := range r.Hosts {
			if strings.TrimSpace(h) == "" || strings.ContainsAny(h, "/ ") {
				errs = append(errs, fmt.Errorf("render.hosts: %q is not a host name", h))
			}
		}
	}
	for _, c := range s.DedupAgainst {
		if c == "" || (c != "*" && (strings.ContainsAny(c, " /\t\n") || len(c) > 200)) {
			errs = append(errs, fmt.Errorf("dedupAgainst: %q is not a crawl name (or \"*\" for every crawl)", c))
		}
	}
	if s.Name == "." || s.Name == ".." {
		errs = append(errs, fmt.Errorf("name: %q is not a crawl name (it names files and objects)", s.Name))
	}
	if s.Name != "" && (strings.ContainsAny(s.Name, " /\t\n") || len(s.Name) > 200) {
		errs = append(errs, fmt.Errorf("name: %q must be at most 200 characters without spaces or slashes", s.Name))
	}
	for _, c := range []struct {
		name string
		v    int64
	}{{"maxPages", int64(s.MaxPages)}, {"maxDepth", int64(s.MaxDepth)}, {"maxPagesPerHost", int64(s.MaxPagesPerHost)}, {"maxHosts", int64(s.MaxHosts)},
		{"maxOutlinks", int64(s.MaxOutlinks)}, {"concurrency", int64(s.Concurrency)}, {"maxBodyBytes", s.MaxBodyBytes},
		{"maxAttempts", int64(s.MaxAttempts)}, {"maxBatch", int64(s.MaxBatch)}, {"maxBytes", s.MaxBytes}} {
		if c.v < 0 {
			errs = append(errs, fmt.Errorf("%s: must not be negative (got %d)", c.name, c.v))
		}
	}
	if s.MaxBodyBytes > MaxBodyBytesCap {
		errs = append(errs, fmt.Errorf("maxBodyBytes: %d is over the most a worker reads of one body, %d (1 GiB)", s.MaxBodyBytes, int64(MaxBodyBytesCap)))
	}
	if IsSecretRef(s.Proxy) {
		if err := CheckSecretRef(s.Proxy); err != nil {
			errs = append(errs, fmt.Errorf("proxy: %w", err))
		}
	} else if s.Proxy != "" {
		if _, err := ParseProxy(s.Proxy); err != nil {
			errs = append(errs, fmt.Errorf("proxy: %w", err))
		}
	}
	switch s.PolitenessKey {
	case "", PolitenessHost, PolitenessDomain:
	default:
		errs = append(errs, fmt.Errorf("politenessKey: %q is not host or domain", s.PolitenessKey))
	}
	if k := s.AutoThrottle; k < 0 || k > 100 {
		errs = append(errs, fmt.Errorf("autoThrottle: %v is outside 0–100 (the gap as a multiple of the response time; 0 is off)", k))
	}
	if s.Concurrency > 64 {
		errs = append(errs, fmt.Errorf("concurrency: %d requests in flight per host is impolite; at most 64", s.Concurrency))
	}
	for _, d := range []struct {
		name string
		v    Duration
	}{{"delay", s.Delay}, {"maxDuration", s.MaxDuration}, {"maxCrawlDelay", s.MaxCrawlDelay}, {"requestTimeout", s.RequestTimeout}, {"retryBase", s.RetryBase},
		{"batchWindow", s.BatchWindow}, {"fetchLease", s.FetchLease}, {"hostIdleTimeout", s.HostIdleTimeout}, {"progressInterval", s.ProgressInterval},
		{"recrawl.interval", s.Recrawl.Interval}, {"recrawl.minInterval", s.Recrawl.MinInterval},
		{"recrawl.maxInterval", s.Recrawl.MaxInterval}, {"warc.maxAge", s.WARC.MaxAge}} {
		if d.v < 0 {
			errs = append(errs, fmt.Errorf("%s: must not be negative", d.name))
		}
	}
	if s.Recrawl.MinInterval > s.Recrawl.MaxInterval {
		errs = append(errs, fmt.Errorf("recrawl: minInterval %s is above maxInterval %s", s.Recrawl.MinInterval.D(), s.Recrawl.MaxInterval.D()))
	}
	if s.Recrawl.GoneAfter < 0 {
		errs = append(errs, errors.New("recrawl.goneAfter: must not be negative"))
	}
	if b := s.NearDup.SimHashBits; b < 1 || b > 3 {
		errs = append(errs, fmt.Errorf("nearDup.simhashBits: %d is outside 1–3 (what the block index finds)", b))
	}
	if j := s.NearDup.MinHashJaccard; j <= 0 || j > 1 {
		errs = append(errs, fmt.Errorf("nearDup.minhashJaccard: %v is outside (0, 1]", j))
	}
	if s.WARC.MaxBytes < 1<<20 {
		errs = append(errs, fmt.Errorf("warc.maxBytes: %d is below 1 MiB", s.WARC.MaxBytes))
	}
	if s.RequestTimeout > 0 && s.RequestTimeout.D() < time.Second {
		errs = append(errs, errors.New("requestTimeout: at least 1s"))
	}
	errs = append(errs, s.Requisites.validate()...)
	errs = append(errs, validateExtract(s.Extract)...)
	return errors.Join(errs...)
}

// CheckSeed says why a seed cannot be crawled ("" if it can be).
func CheckSeed(seed string) string {
	u, err := url.Parse(strings.TrimSpace(seed))
	switch {
	case err != nil:
		return "not a URL: " + err.Error()
	case u.Scheme != "http" && u.Scheme != "https":
		return "not an http(s) URL"
	case u.Host == "":
		return "no host"
	}
	return ""
}

// Duration is a time.Duration that reads JSON as "1.5s"/"200ms" or as a number of seconds.
type Duration time.Duration

// D returns the time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// MarshalJSON writes the duration as a string such as "1.5s".
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads "1.5s", "200ms" or a number of seconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("duration %q: want e.g. \"1s\" or \"250ms\"", s)
		}
		*d = Duration(v)
		return nil
	}
	var secs float64
	if err := json.Unmarshal(b, &secs); err != nil {
		return fmt.Errorf("duration %s: want a string like \"1s\" or a number of seconds", b)
	}
	*d = Duration(secs * float64(time.Second))
	return nil
}

// MaxBodyBytesCap is the most maxBodyBytes may be: one body is read whole into memory, and
// may overdraw a worker's body budget by that much (internal/membudget).
const MaxBodyBytesCap = 1 << 30
