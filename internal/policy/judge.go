package policy

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/store"
)

// Reasons a discovered link is not admitted (besides the trap rules' own).
const (
	RejectScope      = "out of scope"
	RejectDenied     = "denied by the crawl's deny list"
	RejectDepth      = "too many link hops from a seed"
	RejectOutlinks   = "over the page's outlink cap"
	RejectBadURL     = "malformed URL"
	RejectPort       = "port not allowed"
	RejectNotAllowed = "matches none of the crawl's allow patterns"
	RejectRequisites = "over the page's requisites cap"
	RejectReqHosts   = "over the page's cap on requisite hosts out of scope"
	RejectImports    = "over the stylesheet's import cap"
	RejectKind       = "a requisite kind the crawl does not take"
)

// Admissible says why a candidate may not enter the crawl's frontier, or "". A page's
// requisite (crawl.SourceEmbed) is the page's, not a link to follow: neither the crawl's
// scope nor maxDepth nor the trap rules judge it (Heritrix's transclusion hops); its deny
// lists and allowed ports do.
func (ci *Crawl) Admissible(c store.Candidate) string {
	embed := c.Source == crawl.SourceEmbed
	switch {
	case embed && ci.scope.DeniesHost(c.Host):
		return RejectDenied
	case !embed && !ci.scope.Allows(c.Host):
		return RejectScope
	case ci.scope.DeniesURL(c.Key):
		return RejectDenied
	case !embed && c.Depth > ci.Spec.MaxDepth:
		return RejectDepth
	}
	u, err := url.Parse(c.Key)
	if err != nil {
		return RejectBadURL
	}
	if !ci.portAllowed(u) {
		return RejectPort
	}
	if embed {
		return ""
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

// HeaderFor is the crawl's own headers for a request to the host (an authority): only to
// hosts whose pages the crawl may fetch (its scope). An API key is for the sites the operator
// named, not for the CDN a page's image is on, nor for any host a hostile page names.
func (ci *Crawl) HeaderFor(authority string) http.Header {
	if ci.Header == nil || !ci.scope.Allows(authority) {
		return nil
	}
	return ci.Header
}

// InScope says whether the crawl's scope takes the host's pages.
func (ci *Crawl) InScope(authority string) bool { return ci.scope.Allows(authority) }

// Includes says whether the crawl's allow patterns (includePatterns) take the URL key in;
// which sources they judge is admission's rule (admit.Discovery).
func (ci *Crawl) Includes(key string) bool { return ci.scope.IncludesURL(key) }
