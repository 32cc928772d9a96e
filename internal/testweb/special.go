package testweb

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
)

// special is a hand-built host for one family of hard cases.
type special interface {
	site
	host() string
}

func newSpecials(w *Web) []special {
	return []special{
		&trapSite{w: w},
		&redirectSite{w: w},
		&hostileSite{w: w},
		&retrySite{w: w, first: map[string]time.Time{}},
		&errorSite{w: w},
		newDupSite(w),
		&etagSite{w: w},
		&sitemapSite{w: w},
		&variantsSite{w: w},
		&miscSite{w: w},
	}
}

// specialRoots lists the special hosts' front pages in a fixed order.
func (w *Web) specialRoots() []string {
	if !w.cfg.Specials {
		return nil
	}
	return []string{"http://trap.test/", "http://redirect.test/", "http://hostile.test/",
		"http://retry.test/", "http://error.test/", "http://dup.test/", "http://etag.test/",
		"http://sitemap.test/", "http://variants.test/", "http://misc.test/"}
}

// allowAll is the robots.txt of special hosts that set no rules.
var allowAll = robotsSpec{profile: "allow", status: 200, body: "User-agent: *\nDisallow:\n"}

func htmlPage(w http.ResponseWriter, d doc) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(d.render())
}

// listPage renders a page that links every href.
func listPage(w http.ResponseWriter, title string, hrefs ...string) {
	d := doc{title: title, paragraphs: []string{"Links to the cases this host holds."}}
	for _, h := range hrefs {
		d.links = append(d.links, link{href: h, text: h})
	}
	htmlPage(w, d)
}

func okLinks(host string, hrefs ...string) pageInfo {
	pi := pageInfo{kind: pageOK}
	for _, h := range hrefs {
		if u := absolute(host, h); u != "" {
			pi.links = append(pi.links, u)
		}
	}
	return pi
}

// ---- trap.test: infinite URL spaces. Outside the truth; the audit counts requests to it. ----

type trapSite struct{ w *Web }

func (s *trapSite) host() string                 { return "trap.test" }
func (s *trapSite) robots() robotsSpec           { return allowAll }
func (s *trapSite) sitemapPages() []string       { return nil }
func (s *trapSite) page(string, string) pageInfo { return pageInfo{kind: pageOther} }

func (s *trapSite) serve(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	var links []string
	switch {
	case strings.HasPrefix(p, "/calendar/"):
		var y, m int
		if _, err := fmt.Sscanf(p, "/calendar/%d/%d", &y, &m); err != nil {
			http.NotFound(w, r)
			return
		}
		next, prev := time.Date(y, time.Month(m)+1, 1, 0, 0, 0, 0, time.UTC), time.Date(y, time.Month(m)-1, 1, 0, 0, 0, 0, time.UTC)
		links = []string{fmt.Sprintf("/calendar/%d/%d", next.Year(), next.Month()), fmt.Sprintf("/calendar/%d/%d", prev.Year(), prev.Month())}
	case strings.HasPrefix(p, "/s/"):
		// A fresh session id on every link: the same page under endless URLs.
		links = []string{fmt.Sprintf("/s/page?sid=%x", time.Now().UnixNano()), fmt.Sprintf("/s/other?PHPSESSID=%x", time.Now().UnixNano()+1)}
	case strings.HasPrefix(p, "/a/"):
		links = []string{strings.TrimSuffix(p, "/") + "/a/b/"}
	case strings.HasPrefix(p, "/deep/"):
		links = []string{strings.TrimSuffix(p, "/") + fmt.Sprintf("/%d/", strings.Count(p, "/"))}
	case p == "/":
		links = []string{"/calendar/2026/11", "/s/page?sid=1", "/a/b/", "/deep/1/"}
	default:
		http.NotFound(w, r)
		return
	}
	listPage(w, "trap "+p, links...)
}

// ---- redirect.test: chains, loops, cross-host and loopback targets. ------------------------
//
// /five/5 is a chain of exactly five redirects to a page (/five/0): a crawler that follows at
// most five hops reaches it. /six/6 is a chain of six: the sixth hop (/six/1 → /six/0) is
// past the cap and refused, so /six/0 is never requested. (/chain/N, a chain of N, is served
// but not linked.)

type redirectSite struct{ w *Web }

func (s *redirectSite) host() string           { return "redirect.test" }
func (s *redirectSite) robots() robotsSpec     { return allowAll }
func (s *redirectSite) sitemapPages() []string { return nil }

var redirectRootLinks = []string{"/five/5", "/six/6", "/loop/a", "/to-other", "/to-loopback", "/to-metadata",
	"/to-mapped-loopback", "/to-private"}

// MaxRedirectHops is the redirect cap redirect.test's /five/ and /six/ chains test.
const MaxRedirectHops = 5

// ForbiddenTargets are where redirect.test's SSRF redirects point (besides its own loopback
// address): a crawler must refuse them without sending a packet.
var ForbiddenTargets = map[string]string{
	"/to-metadata":        "http://169.254.169.254/latest/meta-data/",
	"/to-mapped-loopback": "http://[::ffff:127.0.0.1]:1/",
	"/to-private":         "http://10.0.0.1/admin",
}

func (s *redirectSite) target(r *http.Request, p string) (string, bool) {
	var n int
	switch {
	case p == "/loop/a":
		return "/loop/b", true
	case p == "/loop/b":
		return "/loop/a", true
	case p == "/to-other":
		return "http://" + s.w.HostName(s.w.cfg.Hosts-1) + "/", true
	case ForbiddenTargets[p] != "":
		return ForbiddenTargets[p], true
	case p == "/to-loopback":
		addr := "127.0.0.1:1"
		if r != nil {
			if a, ok := r.Context().Value(http.LocalAddrContextKey).(interface{ String() string }); ok {
				addr = a.String()
			}
		}
		return "http://" + addr + "/", true
	}
	for _, chain := range []string{"chain", "five", "six"} {
		if _, err := fmt.Sscanf(p, "/"+chain+"/%d", &n); err == nil && n > 0 && p == fmt.Sprintf("/%s/%d", chain, n) {
			return fmt.Sprintf("/%s/%d", chain, n-1), true
		}
	}
	return "", false
}

func (s *redirectSite) serve(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	if t, ok := s.target(r, p); ok {
		code := http.StatusMovedPermanently
		if strings.HasPrefix(p, "/loop/") || strings.HasPrefix(p, "/to-") {
			code = http.StatusFound
		}
		http.Redirect(w, r, t, code)
		return
	}
	switch p {
	case "/":
		listPage(w, "redirects", redirectRootLinks...)
	case "/chain/0", "/six/0":
		listPage(w, "end of the chain", "/")
	case "/five/0":
		htmlPage(w, doc{title: "five redirects away", paragraphs: []string{
			"This page sits at the end of a chain of exactly five redirects, the most a polite crawler follows.",
			"Reaching it shows the redirect cap counts hops from the first request, not from the last page.",
		}, links: []link{{href: "/", text: "back to the redirects"}}})
	default:
		http.NotFound(w, r)
	}
}

func (s *redirectSite) page(p, q string) pageInfo {
	if q != "" {
		return pageInfo{}
	}
	if t, ok := s.target(nil, p); ok {
		if p == "/to-loopback" || ForbiddenTargets[p] != "" {
			return pageInfo{kind: pageRedirect} // a loopback, private or metadata target is refused, not followed
		}
		if p == "/six/1" {
			return pageInfo{kind: pageRedirect} // its target would be the sixth hop: refused
		}
		return pageInfo{kind: pageRedirect, links: []string{absolute(s.host(), t)}}
	}
	switch p {
	case "/":
		return okLinks(s.host(), redirectRootLinks...)
	case "/chain/0", "/five/0":
		return okLinks(s.host(), "/")
	}
	return pageInfo{}
}

// ---- error.test: pages that fail forever. -----------------------------------------------

type errorSite struct{ w *Web }

func (s *errorSite) host() string           { return "error.test" }
func (s *errorSite) robots() robotsSpec     { return allowAll }
func (s *errorSite) sitemapPages() []string { return nil }

var errorLinks = []string{"/fail/1", "/fail/2", "/fail/3", "/fail/4", "/fail/5"}

func (s *errorSite) serve(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/":
		listPage(w, "errors", errorLinks...)
	case strings.HasPrefix(r.URL.Path, "/fail/"):
		http.Error(w, "internal server error, forever", http.StatusInternalServerError)
	default:
		http.NotFound(w, r)
	}
}

func (s *errorSite) page(p, q string) pageInfo {
	switch {
	case q != "":
	case p == "/":
		return okLinks(s.host(), errorLinks...)
	case strings.HasPrefix(p, "/fail/") && len(p) == len("/fail/1") && p[6] >= '1' && p[6] <= '5':
		return pageInfo{kind: pageDead}
	}
	return pageInfo{}
}

// ---- retry.test: 429 and 503 with Retry-After until the wait has passed. -----------------

type retrySite struct {
	w     *Web
	mu    sync.Mutex
	first map[string]time.Time
}

func (s *retrySite) host() string           { return "retry.test" }
func (s *retrySite) robots() robotsSpec     { return allowAll }
func (s *retrySite) sitemapPages() []string { return nil }

var retryLinks = []string{"/busy/1", "/busy/2", "/busy/3", "/unavailable/1", "/unavailable/2"}

func (s *retrySite) serve(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	if p == "/" {
		listPage(w, "retry later", retryLinks...)
		return
	}
	if s.page(p, r.URL.RawQuery).kind != pageOK {
		http.NotFound(w, r)
		return
	}
	now := time.Now()
	s.mu.Lock()
	first, seen := s.first[p]
	if !seen {
		first = now
		s.first[p] = now
	}
	s.mu.Unlock()
	if until := first.Add(s.w.cfg.RetryAfter); now.Before(until) {
		if strings.HasPrefix(p, "/busy/") {
			w.Header().Set("Retry-After", fmt.Sprint(int(s.w.cfg.RetryAfter.Seconds()+0.5)))
			http.Error(w, "too many requests", http.StatusTooManyRequests)
		} else {
			w.Header().Set("Retry-After", until.Add(time.Second).UTC().Format(http.TimeFormat))
			http.Error(w, "service unavailable", http.StatusServiceUnavailable)
		}
		return
	}
	listPage(w, "served after waiting: "+p, "/")
}

func (s *retrySite) page(p, q string) pageInfo {
	if q != "" {
		return pageInfo{}
	}
	if p == "/" {
		return okLinks(s.host(), retryLinks...)
	}
	for _, l := range retryLinks {
		if p == l {
			return okLinks(s.host(), "/")
		}
	}
	return pageInfo{}
}

// ---- etag.test: conditional GET; stable pages answer 304, changing ones change. -----------

type etagSite struct{ w *Web }

func (s *etagSite) host() string           { return "etag.test" }
func (s *etagSite) robots() robotsSpec     { return allowAll }
func (s *etagSite) sitemapPages() []string { return nil }

var etagLinks = []string{"/stable/1", "/stable/2", "/stable/3", "/changing/1", "/changing/2", "/changing/3"}

// version of a page and its modification time: stable pages never change; changing pages get
// a new version every ChangePeriod.
func (s *etagSite) version(p string, now time.Time) (etag string, modified time.Time) {
	base := s.w.epoch.Add(-24 * time.Hour).Truncate(time.Second)
	if strings.HasPrefix(p, "/stable/") {
		return `"s` + strings.TrimPrefix(p, "/stable/") + `"`, base
	}
	v := int64(now.Sub(s.w.epoch) / s.w.cfg.ChangePeriod)
	return fmt.Sprintf(`"c%s-%d"`, strings.TrimPrefix(p, "/changing/"), v),
		s.w.epoch.Add(time.Duration(v) * s.w.cfg.ChangePeriod).Truncate(time.Second)
}

func (s *etagSite) serve(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	if p == "/" {
		listPage(w, "conditional GET", etagLinks...)
		return
	}
	if s.page(p, r.URL.RawQuery).kind != pageOK {
		http.NotFound(w, r)
		return
	}
	etag, modified := s.version(p, time.Now())
	w.Header().Set("ETag", etag)
	w.Header().Set("Last-Modified", modified.UTC().Format(http.TimeFormat))
	if inm := r.Header.Get("If-None-Match"); inm != "" {
		if strings.Contains(inm, etag) || inm == "*" {
			w.WriteHeader(http.StatusNotModified)
			return
		}
	} else if ims, err := http.ParseTime(r.Header.Get("If-Modified-Since")); err == nil && !modified.After(ims) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	r2 := rng(s.w.cfg.Seed, 0xe7a9, uint64(len(p)), uint64(p[len(p)-1]))
	htmlPage(w, doc{title: "version " + etag + " of " + p, paragraphs: append([]string{"This is version " + etag + "."}, paragraphs(r2, 2, 3)...),
		links: []link{{href: "/", text: "home"}}})
}

func (s *etagSite) page(p, q string) pageInfo {
	if q != "" {
		return pageInfo{}
	}
	if p == "/" {
		return okLinks(s.host(), etagLinks...)
	}
	for _, l := range etagLinks {
		if p == l {
			return okLinks(s.host(), "/")
		}
	}
	return pageInfo{}
}
