package testweb

import (
	"net/http"
	"strings"
)

// ---- signals.test: every robots signal a site can send (Config.Signals). --------------------
//
// It answers http:// and https:// with a robots.txt each (RFC 9309 §2.3): http's forbids
// /plain-blocked/, https's forbids /tls-blocked/. Its pages send X-Robots-Tag headers (plain,
// comma lists, several headers, scoped to the crawler's token or to another crawler's) and meta
// robots elements (name="robots", the crawler's token, another crawler's). A compliant crawler
// never requests a path under /only/: those are linked only from pages that say nofollow to it.
// It follows the links of /after/ pages' parents, which say nofollow to someone else or
// noindex only. Its own front page is linked from nowhere: seed it.

type signalsSite struct{ w *Web }

func (s *signalsSite) host() string { return "signals.test" }

func (s *signalsSite) robots() robotsSpec {
	return robotsSpec{profile: "per-scheme (http)", status: 200,
		body:  "User-agent: *\nDisallow: /plain-blocked/\n",
		rules: ruleset{rules: []rule{{false, "/plain-blocked/"}}}}
}

// robotsFor is the robots.txt of one scheme.
func (s *signalsSite) robotsFor(secure bool) robotsSpec {
	if !secure {
		return s.robots()
	}
	return robotsSpec{profile: "per-scheme (https)", status: 200,
		body:  "User-agent: *\nDisallow: /tls-blocked/\n",
		rules: ruleset{rules: []rule{{false, "/tls-blocked/"}}}}
}

func (s *signalsSite) sitemapPages() []string { return nil }

// SignalsCase is a page of signals.test and what its signals mean for a crawler whose product
// token is the web's.
type SignalsCase struct {
	Path     string
	Header   []string // X-Robots-Tag values
	Meta     string   // <meta> markup in its head
	NoIndex  bool     // its text must not be stored
	NoFollow bool     // its link (Path's /only/ or /after/ page) must not be followed
}

// Next is the page Path links to: under /only/ when it must not be followed.
func (c SignalsCase) Next() string {
	name := strings.ReplaceAll(strings.Trim(c.Path, "/"), "/", "-")
	if c.NoFollow {
		return "/only/" + name
	}
	return "/after/" + name
}

// SignalsCases are signals.test's cases for a crawler with product token token.
func SignalsCases(token string) []SignalsCase {
	return []SignalsCase{
		{Path: "/xrt/noindex", Header: []string{"noindex"}, NoIndex: true},
		{Path: "/xrt/nofollow", Header: []string{"nofollow"}, NoFollow: true},
		{Path: "/xrt/none", Header: []string{"none"}, NoIndex: true, NoFollow: true},
		{Path: "/xrt/comma", Header: []string{"noarchive, nofollow"}, NoFollow: true},
		{Path: "/xrt/several", Header: []string{"noarchive", "noindex"}, NoIndex: true},
		{Path: "/xrt/scoped", Header: []string{token + ": nofollow", "otherbot: noindex"}, NoFollow: true},
		{Path: "/xrt/other-bot", Header: []string{"googlebot: noindex, nofollow"}},
		{Path: "/xrt/scope-switch", Header: []string{"googlebot: noindex, " + token + ": nofollow"}, NoFollow: true},
		{Path: "/meta/robots", Meta: `<meta name="robots" content="noindex">`, NoIndex: true},
		{Path: "/meta/token", Meta: `<meta name="` + token + `" content="noindex, nofollow">`, NoIndex: true, NoFollow: true},
		{Path: "/meta/other-bot", Meta: `<meta name="googlebot" content="noindex, nofollow">`},
	}
}

// SignalsBlocked are the paths robots.txt forbids, by scheme.
var SignalsBlocked = map[string]string{"http": "/plain-blocked/a", "https": "/tls-blocked/b"}

func (s *signalsSite) cases() []SignalsCase { return SignalsCases(s.w.cfg.ProductToken) }

func (s *signalsSite) serve(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	if p == "/" {
		hrefs := []string{"https://signals.test/", "http://signals.test/"}
		for _, path := range SignalsBlocked { // both schemes of both: each is forbidden on one only
			hrefs = append(hrefs, "http://signals.test"+path, "https://signals.test"+path)
		}
		for _, c := range s.cases() {
			hrefs = append(hrefs, c.Path)
		}
		listPage(w, "signals "+r.URL.Path, hrefs...)
		return
	}
	for _, c := range s.cases() {
		if p == c.Path {
			for _, v := range c.Header {
				w.Header().Add("X-Robots-Tag", v)
			}
			htmlPage(w, doc{title: c.Path, head: c.Meta, paragraphs: []string{"Robots signals: " + c.Path + " " + strings.Join(c.Header, " | ") + "."},
				links: []link{{href: c.Next(), text: "next"}}})
			return
		}
	}
	if strings.HasPrefix(p, "/only/") || strings.HasPrefix(p, "/after/") || strings.HasPrefix(p, "/plain-blocked/") || strings.HasPrefix(p, "/tls-blocked/") {
		htmlPage(w, doc{title: p, paragraphs: []string{"A page at " + p + "."}, links: []link{{href: "/", text: "home"}}})
		return
	}
	http.NotFound(w, r)
}

// page keeps signals.test out of the truth: its tests say what they expect themselves.
func (s *signalsSite) page(p, q string) pageInfo { return pageInfo{kind: pageOther} }
