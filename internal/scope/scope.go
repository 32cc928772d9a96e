// Package scope owns which hosts a crawl may follow links to: the seeds' hosts, their
// registrable domains (public-suffix aware), an allow list of domains, or any host.
package scope

import (
	"net"
	"regexp"
	"strings"

	"golang.org/x/net/publicsuffix"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/urlnorm"
)

// Scope decides, by host, whether a URL is in a crawl.
type Scope struct {
	kind  string
	hosts map[string]bool // exact hosts (scope host)
	roots []string        // domains whose subdomains are in (scope domain and list)
	deny  *Matcher        // denied domains (and their subdomains) and URL patterns
	allow *Matcher        // URL patterns a discovered URL must match (nil: any URL)
}

// New builds the scope of spec from its normalized seed URLs' hosts.
func New(spec crawl.Spec, seedHosts []string) *Scope {
	s := &Scope{kind: spec.Scope, hosts: map[string]bool{}, deny: NewMatcher(spec.DenyHosts, spec.DenyPatterns)}
	if len(spec.AllowPatterns) > 0 {
		s.allow = NewMatcher(nil, spec.AllowPatterns)
	}
	switch spec.Scope {
	case crawl.ScopeHost:
		for _, h := range seedHosts {
			s.hosts[urlnorm.Hostname(h)] = true
		}
	case crawl.ScopeDomain:
		for _, h := range seedHosts {
			s.roots = append(s.roots, Registrable(urlnorm.Hostname(h)))
		}
	case crawl.ScopeList:
		for _, d := range spec.AllowDomains {
			s.roots = append(s.roots, strings.TrimPrefix(strings.ToLower(strings.TrimSpace(d)), "*."))
		}
	}
	return s
}

// Allows reports whether host (an authority: host[:port]) is in scope.
func (s *Scope) Allows(authority string) bool {
	if s.deny.MatchHost(authority) {
		return false
	}
	h := urlnorm.Hostname(authority)
	switch s.kind {
	case crawl.ScopeAny:
		return true
	case crawl.ScopeHost:
		return s.hosts[h]
	}
	for _, r := range s.roots {
		if h == r || strings.HasSuffix(h, "."+r) {
			return true
		}
	}
	return false
}

// IncludesURL reports whether a normalized URL matches one of the allow patterns (true when
// the crawl gives none).
func (s *Scope) IncludesURL(u string) bool { return s.allow == nil || s.allow.MatchURL(u) }

// DeniesHost reports whether host (an authority) is one of the denied domains or under one.
func (s *Scope) DeniesHost(authority string) bool { return s.deny.MatchHost(authority) }

// DeniesURL reports whether a normalized URL matches one of the deny patterns.
func (s *Scope) DeniesURL(u string) bool { return s.deny.MatchURL(u) }

// Registrable is the registrable domain (eTLD+1) of host, or host itself when it has none
// (an IP address, a single label, a public suffix).
func Registrable(host string) string {
	if net.ParseIP(host) != nil {
		return host
	}
	d, err := publicsuffix.EffectiveTLDPlusOne(host)
	if err != nil {
		return host
	}
	return d
}

// Matcher tells whether a URL is one a list names: by host (a listed domain and its
// subdomains) or by a pattern (a Go regexp on the normalized URL).
type Matcher struct {
	domains  []string
	patterns []*regexp.Regexp
}

// NewMatcher builds a Matcher from hosts ("example.com", "*.example.com") and patterns
// (validated with the spec: one that does not compile is left out).
func NewMatcher(hosts, patterns []string) *Matcher {
	m := &Matcher{}
	for _, d := range hosts {
		m.domains = append(m.domains, strings.TrimPrefix(strings.TrimPrefix(strings.ToLower(strings.TrimSpace(d)), "*"), "."))
	}
	for _, p := range patterns {
		if re, err := regexp.Compile(p); err == nil {
			m.patterns = append(m.patterns, re)
		}
	}
	return m
}

// Match reports whether the normalized URL u (of host authority) is named, by host or by
// pattern.
func (m *Matcher) Match(authority, u string) bool { return m.MatchHost(authority) || m.MatchURL(u) }

// MatchHost reports whether authority's host is a listed domain or one of its subdomains.
func (m *Matcher) MatchHost(authority string) bool {
	if m == nil {
		return false
	}
	h := urlnorm.Hostname(authority)
	for _, d := range m.domains {
		if h == d || strings.HasSuffix(h, "."+d) {
			return true
		}
	}
	return false
}

// MatchURL reports whether the normalized URL u matches one of the patterns.
func (m *Matcher) MatchURL(u string) bool {
	if m == nil {
		return false
	}
	for _, re := range m.patterns {
		if re.MatchString(u) {
			return true
		}
	}
	return false
}
