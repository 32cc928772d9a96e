package admit

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/dedup"
	"github.com/trawlerdev/trawler/internal/robots"
	"github.com/trawlerdev/trawler/internal/scope"
	"github.com/trawlerdev/trawler/internal/store"
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

// ProxyGuard is the address guard as CheckProxy asks it (netguard.Dialer).
type ProxyGuard interface {
	// Refuses says why every address host resolves to is forbidden ("" when one is allowed).
	Refuses(ctx context.Context, host string) string
}

// CheckProxy refuses a spec whose proxy the fetch client's address guard would refuse to dial:
// such a crawl could fetch nothing. A proxy that is the worker's own (TRAWLER_PROXY) is the
// operator's and dialed as named; one that does not resolve now is left to fail its requests
// as network errors.
func (c *Crawls) CheckProxy(ctx context.Context, spec crawl.Spec) error {
	if c == nil || spec.Proxy == "" || c.Guard == nil {
		return nil
	}
	raw, err := crawl.ResolveSecret(spec.Proxy)
	if err != nil {
		return nil // a secret this process cannot read: the fetch workers resolve it, and judge its dials
	}
	p, err := crawl.ParseProxy(raw)
	if err != nil {
		return err
	}
	if own, err := crawl.ParseProxy(c.DefaultProxy); err == nil && c.DefaultProxy != "" && own.String() == p.String() {
		return nil
	}
	if why := c.Guard.Refuses(ctx, p.Hostname()); why != "" {
		return fmt.Errorf("proxy %s: the address guard refuses it (%s): a proxy a spec names is dialed as any target is; "+
			"allow its network with TRAWLER_ALLOW_NETWORKS, or make it the workers' own TRAWLER_PROXY", p.Redacted(), why)
	}
	return nil
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
		return nil, fmt.Errorf("admit: crawl %s: no spec known", id)
	}
	var spec crawl.Spec
	if err := c.Store.CrawlSpec(ctx, id, &spec); err != nil {
		return nil, err
	}
	return c.Put(id, spec), nil
}

// Put builds a crawl's rules from its spec as recorded, and caches them.
func (c *Crawls) Put(id string, spec crawl.Spec) *Crawl {
	ci := c.build(id, spec)
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

// build makes a crawl's rules from its recorded spec: the crawl workflow applied its defaults
// before it was recorded.
func (c *Crawls) build(id string, spec crawl.Spec) *Crawl {
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

// Candidate builds a frontier candidate from a URL's request form (urlnorm): it is fetched as
// that, and known to the frontier by its key form.
func (c *Crawls) Candidate(request string, depth, hops int, source crawl.Source) store.Candidate {
	key, err := c.Norm.Normalize(request)
	if err != nil { // (the key rules only remove: a request form that is valid has a key)
		key = request
	}
	return store.Candidate{URL: request, Key: key, Hash: urlnorm.Hash(key), Host: urlnorm.Authority(key),
		Depth: depth, Hops: hops, Source: source, Priority: priority(depth, source)}
}

// priority orders a host's claims (highest first; ties by depth, then due time):
//
//	1/(1+depth)                      shallower pages first
//	+ 1                              seeds and sitemap files
//	+ 0.5 + 0.5·<priority>           pages a sitemap lists (its <priority>, 0.5 if absent;
//	+ 0.25                           SitemapPriority), and lately changed by its <lastmod>
//	+ 0.5 or 0.25                    feed items published in the last 2 days or 2 weeks (Fresh)
//	+ 0.05 per further in-link       added when a queued URL is linked again (store.Admit)
//
// Host-level signals shape when a host's batch runs (its delay, backoff, Retry-After), not
// the order within it.
func priority(depth int, source crawl.Source) float32 {
	p := 1 / float32(1+depth)
	switch source {
	case crawl.SourceSeed, crawl.SourceSitemapFile:
		p += 1
	case crawl.SourceSitemap:
		p += 0.75
	}
	return p
}

// SitemapPriority adjusts a sitemap entry's candidate by the entry's own <priority> (0 to 1;
// negative: absent, which counts as 0.5) and <lastmod> (within 30 days: changed lately).
func SitemapPriority(c *store.Candidate, sitemapPriority float64, lastMod, now time.Time) {
	if sitemapPriority >= 0 {
		c.Priority += float32(sitemapPriority-0.5) * 0.5
	}
	if !lastMod.IsZero() && now.Sub(lastMod) < 30*24*time.Hour {
		c.Priority += 0.25
	}
}

// Fresh is what a feed item's publication adds to its link's priority: a feed's new items are
// what its site just published.
func Fresh(published, now time.Time) float32 {
	switch age := now.Sub(published); {
	case published.IsZero():
		return 0
	case age < 48*time.Hour:
		return 0.5
	case age < 14*24*time.Hour:
		return 0.25
	}
	return 0
}

func errorf(format string, args ...any) error { return fmt.Errorf("admit: "+format, args...) }

// Reasons a discovered link is not admitted (besides the trap rules' own).
const (
	RejectScope      = "out of scope"
	RejectDenied     = "denied by the crawl's deny list"
	RejectDepth      = "too many link hops from a seed"
	RejectOutlinks   = "over the page's outlink cap"
	RejectBadURL     = "malformed URL"
	RejectPort       = "port not allowed"
	RejectNotAllowed = "matches none of the crawl's allow patterns"
)

// Admissible says why a candidate may not enter the crawl's frontier, or "".
func (ci *Crawl) Admissible(c store.Candidate) string {
	switch {
	case !ci.scope.Allows(c.Host):
		return RejectScope
	case ci.scope.DeniesURL(c.Key):
		return RejectDenied
	case c.Depth > ci.Spec.MaxDepth:
		return RejectDepth
	}
	u, err := url.Parse(c.Key)
	if err != nil {
		return RejectBadURL
	}
	if !ci.portAllowed(u) {
		return RejectPort
	}
	return ci.traps.Check(u, time.Now())
}

// Hop judges a redirect hop of a request the crawl makes for itself (robots.txt's): why it
// may not be followed ("" when it may) — a denied host or URL, a port not allowed, a scheme
// other than http(s) — and whether the crawl's own headers go with it. They go only to a host
// whose pages the crawl may fetch (its scope): an API key is for the sites the operator named,
// not for wherever one of them redirects robots.txt. A host out of scope is still asked, as a
// stranger, since the rules it serves are the redirecting host's (RFC 9309 §2.3.1.2).
func (ci *Crawl) Hop(c store.Candidate) (why string, own bool) {
	u, err := url.Parse(c.Key)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return RejectBadURL, false
	case ci.scope.DeniesHost(c.Host) || ci.scope.DeniesURL(c.Key):
		return RejectDenied, false
	case !ci.portAllowed(u):
		return RejectPort, false
	}
	return "", ci.scope.Allows(c.Host)
}

// portAllowed says whether u's port (the scheme's default when it names none) may be crawled.
func (ci *Crawl) portAllowed(u *url.URL) bool {
	if len(ci.ports) == 0 {
		return true
	}
	p := u.Port()
	if p == "" {
		p = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	n, err := strconv.Atoi(p)
	return err == nil && slices.Contains(ci.ports, n)
}
