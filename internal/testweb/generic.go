package testweb

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// robots.txt profiles of generic hosts, by host index modulo len(profiles).
var profiles = []string{
	"none",          // 404: everything allowed
	"delay1",        // Crawl-delay: 1
	"delay2",        // Crawl-delay: 2
	"private",       // Disallow: /private/ (pages link into it)
	"product",       // a group for our product token that differs from '*'
	"unavailable",   // 503: everything disallowed (RFC 9309 §2.3.1.4)
	"redirect",      // /robots.txt -> 301 -> /robots-moved.txt with Disallow: /private/
	"oversized",     // > 500 KiB: rules after the first 500 KiB may be ignored
	"slow",          // answers after Config.SlowRobots
	"emptydisallow", // "Disallow:" with no path: everything allowed
}

// generic is host h<idx>.test: Pages pages in a seeded link graph.
type generic struct {
	w    *Web
	idx  int
	name string
	spec *robotsSpec
}

func (g *generic) profile() string { return profiles[g.idx%len(profiles)] }

func (g *generic) robots() robotsSpec { return *g.spec }

// oversizedRobots is shared by every host of the oversized profile (it is 600 KiB).
var oversizedRobots = sync.OnceValue(func() string {
	var b strings.Builder
	b.WriteString("User-agent: *\nDisallow: /private/\n")
	for b.Len() < 600<<10 {
		b.WriteString("# padding padding padding padding padding padding padding padding padding\n")
	}
	b.WriteString("Disallow: /beyond-the-limit/\n") // past 500 KiB; no page lives there
	return b.String()
})

func (g *generic) buildRobots() *robotsSpec {
	tok := g.w.cfg.ProductToken
	s := robotsSpec{profile: g.profile(), status: 200}
	switch s.profile {
	case "none":
		s.status, s.body = 404, "not found\n"
	case "delay1":
		s.body = "User-agent: *\nCrawl-delay: 1\nDisallow: /cgi-bin/\n"
		s.rules = ruleset{crawlDelay: time.Second, rules: []rule{{false, "/cgi-bin/"}}}
	case "delay2":
		s.body = "# be gentle\nUser-agent: *\nCrawl-delay: 2\n"
		s.rules = ruleset{crawlDelay: 2 * time.Second}
	case "private":
		s.body = "User-agent: *\nDisallow: /private/\nAllow: /private/open\n"
		s.rules = ruleset{rules: []rule{{false, "/private/"}, {true, "/private/open"}}}
	case "product":
		// Everyone else is shut out; our token may crawl all but /p/2 (a prefix: /p/2.html,
		// /p/21.html, …) and must take the more specific group, not '*'.
		s.body = "User-agent: *\nDisallow: /\n\nUser-agent: " + strings.ToUpper(tok[:1]) + tok[1:] + "\nDisallow: /p/2\nAllow: /\n"
		s.rules = ruleset{rules: []rule{{false, "/p/2"}, {true, "/"}}}
	case "unavailable":
		s.status, s.body = 503, "temporarily unavailable\n"
		s.rules = ruleset{disallowAll: true}
	case "redirect":
		s.redirect = "/robots-moved.txt"
		s.body = "User-agent: *\nDisallow: /private/\n"
		s.rules = ruleset{rules: []rule{{false, "/private/"}}}
	case "oversized":
		s.body = oversizedRobots()
		s.rules = ruleset{rules: []rule{{false, "/private/"}}}
	case "slow":
		s.slow = g.w.cfg.SlowRobots
		s.body = "User-agent: *\nAllow: /\n"
	case "emptydisallow":
		s.body = "User-agent: *\nDisallow:\n"
	}
	return &s
}

// Page paths by index: 0 is "/"; every tenth is an orphan only other hosts link to; some are
// under /private/ (disallowed on hosts whose profile says so); the rest under /p/.
func (g *generic) path(i int) string {
	switch {
	case i == 0:
		return "/"
	case i%10 == 9:
		return fmt.Sprintf("/o/%d.html", i)
	case i%7 == 3:
		return fmt.Sprintf("/private/%d.html", i)
	default:
		return fmt.Sprintf("/p/%d.html", i)
	}
}

func (g *generic) index(path string) (int, bool) {
	if path == "/" {
		return 0, true
	}
	var dir, file string
	parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
	if len(parts) != 2 {
		return 0, false
	}
	dir, file = parts[0], parts[1]
	n, err := strconv.Atoi(strings.TrimSuffix(file, ".html"))
	if err != nil || n < 1 || n >= g.w.pagesOf(g.idx) || !strings.HasSuffix(file, ".html") {
		return 0, false
	}
	if g.path(n) != "/"+dir+"/"+file {
		return 0, false
	}
	return n, true
}

func isOrphan(i int) bool { return i%10 == 9 }

func (g *generic) url(host, i int) string { return "http://" + g.w.HostName(host) + g.path(i) }

// links of page i: a chain to the next page, random same-host pages, random pages of other
// hosts; the front page also links the next host's front page, the previous host's orphans
// and one special host, so every host is reachable from h0000.
func (g *generic) links(i int) []link {
	cfg := g.w.cfg
	r := rng(cfg.Seed, uint64(g.idx), uint64(i))
	var out []link
	add := func(href, text string) { out = append(out, link{href: href, text: text}) }
	pages := g.w.pagesOf(g.idx)
	next := (i + 1) % pages
	if isOrphan(next) {
		next = (next + 1) % pages
	}
	add(g.path(next), "next")
	for k := 0; k < 4; k++ {
		j := r.IntN(pages)
		if !isOrphan(j) {
			add(g.path(j), "related "+strconv.Itoa(j))
		}
	}
	for k := 0; k < 2 && cfg.Hosts > 1; k++ {
		h := r.IntN(cfg.Hosts)
		j := r.IntN(g.w.pagesOf(h))
		if h != g.idx {
			add(g.url(h, j), "elsewhere "+strconv.Itoa(h))
		}
	}
	if i == 0 {
		if cfg.Hosts > 1 {
			add(g.url((g.idx+1)%cfg.Hosts, 0), "next site")
			prev := (g.idx - 1 + cfg.Hosts) % cfg.Hosts
			for j := 9; j < g.w.pagesOf(prev); j += 10 {
				add(g.url(prev, j), "hidden page")
			}
		}
		for k, root := range g.w.specialRoots() {
			if g.w.specialLinker(k) == g.idx {
				add(root, "special")
			}
		}
	}
	return out
}

func (g *generic) serve(w http.ResponseWriter, r *http.Request) {
	i, ok := g.index(canonicalPath(r.URL.EscapedPath()))
	if !ok {
		http.NotFound(w, r)
		return
	}
	if d := g.w.cfg.PageLatency; d > 0 {
		select {
		case <-time.After(d):
		case <-r.Context().Done():
			return
		}
	}
	rr := rng(g.w.cfg.Seed, uint64(g.idx), uint64(i), 7)
	d := doc{
		title:      fmt.Sprintf("%s page %d: %s", g.name, i, text(rr, 3)),
		paragraphs: paragraphs(rr, 3, 6),
		links:      g.links(i),
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(d.render())
}

func (g *generic) page(path, query string) pageInfo {
	i, ok := g.index(path)
	if !ok || query != "" {
		return pageInfo{kind: pageNone}
	}
	ls := g.links(i)
	out := make([]string, 0, len(ls))
	for _, l := range ls {
		out = append(out, absolute(g.name, l.href))
	}
	return pageInfo{kind: pageOK, links: out}
}

func (g *generic) sitemapPages() []string { return nil }

// resolve turns href, found on the page at base, into a canonical absolute URL ("" if it is not
// an http URL).
func resolve(base, href string) string {
	b, err := url.Parse(base)
	if err != nil {
		return ""
	}
	u, err := b.Parse(href)
	if err != nil || u.Scheme != "http" {
		return ""
	}
	return canonicalURL(hostOnly(u.Host), u.EscapedPath(), u.RawQuery)
}

// absolute resolves href found on a page of host's front page.
func absolute(host, href string) string { return resolve("http://"+host+"/", href) }

// specialLinker is the generic host whose front page links special host k: host k (modulo the
// host count), or the next one when that host's robots.txt shuts crawlers out.
func (w *Web) specialLinker(k int) int {
	h := k % w.cfg.Hosts
	if profiles[h%len(profiles)] == "unavailable" {
		h = (h + 1) % w.cfg.Hosts
	}
	return h
}
