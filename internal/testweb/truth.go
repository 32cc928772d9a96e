package testweb

import (
	"net/url"
	"sort"
)

// Truth is what a compliant crawler starting from the seeds should do on this web. Only
// links a crawler must follow count (not nofollow ones, not those of a meta-nofollow page);
// sitemaps listed in a host's robots.txt count once the host is reached. Trap and hostile
// hosts are outside it (their URLs land in Other).
type Truth struct {
	Pages      []string  `json:"pages"`      // fetch each exactly once: allowed, reachable, 200 HTML
	Dead       []string  `json:"dead"`       // allowed, reachable, fail forever: dead-letter them
	Redirects  []string  `json:"redirects"`  // allowed, reachable redirects
	Disallowed []string  `json:"disallowed"` // reachable, but robots.txt forbids them: never fetch
	Other      []string  `json:"other"`      // reachable but outside the truth (traps, hostile)
	Hosts      []string  `json:"hosts"`      // hosts with a reachable URL
	Clusters   []Cluster `json:"duplicateClusters"`
}

// Truth computes the expected crawl from seeds (absolute http URLs of this web).
func (w *Web) Truth(seeds []string) *Truth {
	t := &Truth{}
	seen := map[string]bool{}
	hosts := map[string]bool{}
	var queue []string
	push := func(u string) {
		if u != "" && !seen[u] {
			seen[u] = true
			queue = append(queue, u)
		}
	}
	for _, s := range seeds {
		if u, err := url.Parse(s); err == nil {
			push(canonicalURL(hostOnly(u.Host), u.EscapedPath(), u.RawQuery))
		}
	}
	for len(queue) > 0 {
		raw := queue[0]
		queue = queue[1:]
		u, err := url.Parse(raw)
		if err != nil {
			continue
		}
		host := u.Hostname()
		s := w.sites[host]
		if s == nil {
			continue
		}
		if !hosts[host] {
			hosts[host] = true
			for _, p := range s.sitemapPages() {
				push(p)
			}
		}
		if !s.robots().rules.allowed(rulePath(u.EscapedPath(), u.RawQuery)) {
			t.Disallowed = append(t.Disallowed, raw)
			continue
		}
		info := s.page(u.EscapedPath(), u.RawQuery)
		switch info.kind {
		case pageOK:
			t.Pages = append(t.Pages, raw)
		case pageRedirect:
			t.Redirects = append(t.Redirects, raw)
		case pageDead:
			t.Dead = append(t.Dead, raw)
		case pageOther:
			t.Other = append(t.Other, raw)
			continue
		default:
			continue
		}
		for _, l := range info.links {
			push(l)
		}
	}
	for h := range hosts {
		t.Hosts = append(t.Hosts, h)
	}
	for _, l := range [][]string{t.Pages, t.Dead, t.Redirects, t.Disallowed, t.Other, t.Hosts} {
		sort.Strings(l)
	}
	pages := map[string]bool{}
	for _, p := range t.Pages {
		pages[p] = true
	}
	if d, ok := w.sites["dup.test"].(*dupSite); ok {
		for _, c := range d.clusters {
			var in []string
			for _, u := range c.URLs {
				if pages[u] {
					in = append(in, u)
				}
			}
			if len(in) > 1 {
				t.Clusters = append(t.Clusters, Cluster{Kind: c.Kind, URLs: in})
			}
		}
	}
	return t
}
