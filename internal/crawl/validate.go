package crawl

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"time"

	"golang.org/x/net/publicsuffix"
)

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
	errs = append(errs, validateOutputs(s.Outputs)...)
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

// MaxBodyBytesCap is the most maxBodyBytes may be: one body is read whole into memory, and
// may overdraw a worker's body budget by that much (internal/membudget).
const MaxBodyBytesCap = 1 << 30
