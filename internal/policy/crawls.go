package policy

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/dedup"
	"github.com/trawlerdev/trawler/internal/extract"
	"github.com/trawlerdev/trawler/internal/robots"
	"github.com/trawlerdev/trawler/internal/scope"
	"github.com/trawlerdev/trawler/internal/traps"
	"github.com/trawlerdev/trawler/internal/urlnorm"
)

// Crawl is a crawl's rules as a worker holds them, derived from its recorded spec: what
// fetching and processing read of it, and what admission judges URLs by.
type Crawl struct {
	ID        string
	Spec      crawl.Spec
	UserAgent string
	Token     string          // robots.txt product token
	Header    http.Header     // the spec's own headers, sent with every request (nil: none)
	Proxy     *url.URL        // the outbound proxy its requests go through (nil: direct)
	Dedup     *dedup.Detector // nil: near-duplicate detection is off
	Extract   *extract.Rules  // nil: the crawl extracts no fields (spec.extract)
	// Unresolved says why a secret the spec names could not be read on this worker: the
	// crawl's requests are not sent (without a header, around a proxy); they fail, counted.
	Unresolved string

	scope     *scope.Scope
	render    *scope.Matcher // nil: the crawl renders nothing
	robotsOff *scope.Matcher // hosts whose robots.txt the crawl does not obey (nil: none)
	traps     traps.Rules
	ports     []int // ports URLs may name (empty: any)
	loaded    time.Time
}

// Crawls caches each crawl's rules per process, for crawlCacheTTL (a block or added seeds
// change a crawl's spec; the process that makes the change forgets its copy at once).
type Crawls struct {
	Store            Specs // where specs are read (nil: only what Put gave is known)
	Norm             *urlnorm.Normalizer
	DefaultUserAgent string
	DefaultProxy     string // the worker's outbound proxy for crawls that name none ("": direct)
	Ports            []int  // ports crawled URLs may name (empty: any)
	// Guard judges the proxy a spec names as the fetch client's dialer will (CheckProxy; nil:
	// not judged).
	Guard ProxyGuard

	mu sync.Mutex
	m  map[string]*Crawl
}

// ProxyKey names the proxy the crawl's requests go through ("": direct), as caches of what a
// proxy brought back are keyed.
func (c *Crawl) ProxyKey() string {
	if c.Proxy == nil {
		return ""
	}
	return c.Proxy.String()
}

// Specs reads a crawl's recorded spec (store.Store in a worker).
type Specs interface {
	CrawlSpec(ctx context.Context, id string, dst any) error
}

// crawlCacheTTL is short so a live change to a crawl (a block signal) reaches every worker within seconds.
const crawlCacheTTL = 5 * time.Second

// Get is a crawl's rules, from the cache or from its recorded spec (without a Store, what Put
// gave, however old).
func (c *Crawls) Get(ctx context.Context, id string) (*Crawl, error) {
	c.mu.Lock()
	if ci, ok := c.m[id]; ok && (c.Store == nil || time.Since(ci.loaded) < crawlCacheTTL) {
		c.mu.Unlock()
		return ci, nil
	}
	c.mu.Unlock()
	if c.Store == nil {
		return nil, fmt.Errorf("policy: crawl %s: no spec known", id)
	}
	var spec crawl.Spec
	if err := c.Store.CrawlSpec(ctx, id, &spec); err != nil {
		return nil, err
	}
	return c.Put(id, spec), nil
}

// Put builds a crawl's rules from its spec as recorded, and caches them.
func (c *Crawls) Put(id string, spec crawl.Spec) *Crawl {
	ci := c.Compile(id, spec)
	c.mu.Lock()
	if c.m == nil {
		c.m = map[string]*Crawl{}
	}
	c.m[id] = ci
	c.mu.Unlock()
	return ci
}

// Forget drops a crawl from the cache, so this process sees a change at once.
func (c *Crawls) Forget(id string) {
	c.mu.Lock()
	delete(c.m, id)
	c.mu.Unlock()
}

// Compile makes a crawl's rules from its recorded spec, uncached: the crawl workflow applied its
// defaults before it was recorded (the CLI's seed check compiles a spec not started yet).
func (c *Crawls) Compile(id string, spec crawl.Spec) *Crawl {
	var hosts []string
	for _, s := range spec.Seeds {
		if n, err := c.Norm.Normalize(s); err == nil {
			hosts = append(hosts, urlnorm.Authority(n))
		}
	}
	ua := spec.UserAgent
	if ua == "" {
		ua = c.DefaultUserAgent
	}
	var det *dedup.Detector
	if !spec.NearDup.Off {
		det, _ = dedup.NewDetector(spec.NearDup.SimHashBits, spec.NearDup.MinHashJaccard) // the spec was validated
	}
	ci := &Crawl{ID: id, Spec: spec, scope: scope.New(spec, hosts), UserAgent: ua, Dedup: det, ports: c.Ports,
		traps: traps.Rules{MaxPathDepth: spec.Traps.MaxPathDepth, MaxRepeats: spec.Traps.MaxSegmentRepeats,
			CalendarYears: spec.Traps.CalendarYears},
		Token: robots.ProductToken(ua), loaded: time.Now()}
	// The spec's rules were checked when it was started (crawl.Spec.Validate).
	ci.Extract, _ = extract.Compile(spec.Extract)
	var err error
	if ci.Header, err = spec.ResolvedHeader(); err != nil {
		ci.Unresolved = crawl.ClipError(err.Error())
	}
	p, err := spec.ResolvedProxy(c.DefaultProxy)
	if err != nil {
		ci.Unresolved = crawl.ClipError(err.Error())
	} else if p != "" {
		if ci.Proxy, err = crawl.ParseProxy(p); err != nil { // a named secret is checked only here
			ci.Unresolved = "proxy: " + err.Error()
		}
	}
	if r := spec.Render; r != nil {
		ci.render = scope.NewMatcher(r.Hosts, r.Patterns)
	}
	if len(spec.RobotsOverride) > 0 {
		ci.robotsOff = scope.NewMatcher(spec.RobotsOverride, nil)
	}
	return ci
}

// SlotKey names the schedule a request to host (an authority) is booked on: the host's own,
// or with politenessKey "domain" its registrable domain's, shared by all its subdomains.
func (ci *Crawl) SlotKey(host string) string {
	if ci.Spec.PolitenessKey == crawl.PolitenessDomain {
		return "domain:" + scope.Registrable(urlnorm.Hostname(host))
	}
	return host
}

// ObeysRobots says whether the crawl obeys the robots.txt of host (an authority): false only
// for the hosts its robotsOverride names.
func (ci *Crawl) ObeysRobots(host string) bool {
	return ci.robotsOff == nil || !ci.robotsOff.MatchHost(host)
}

// Renders says whether the crawl renders the page at the normalized URL u.
func (ci *Crawl) Renders(u string) bool {
	return ci.render != nil && ci.render.Match(urlnorm.Authority(u), u)
}
