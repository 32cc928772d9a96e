package testweb

import (
	"net/http"
	"strings"
)

// ---- js.test: links that exist only once the page's scripts run (Config.Scripts). ------------
//
// Its front page links one static page; its own script (/app.js) adds two links and fetches a
// third from /api/links.json. It also loads a script from tracker.test (a third party: a
// polite renderer blocks it) and one under /private/, which robots.txt forbids. A crawler that
// renders the page finds JSLinks; one that does not finds only the static page. Seed it.

type scriptsSite struct{ w *Web }

func (s *scriptsSite) host() string { return "js.test" }

func (s *scriptsSite) robots() robotsSpec {
	return robotsSpec{profile: "scripts", status: 200, body: "User-agent: *\nDisallow: /private/\n",
		rules: ruleset{rules: []rule{{false, "/private/"}}}}
}

func (s *scriptsSite) sitemapPages() []string { return nil }

// JSLinks are the pages js.test links only from what its scripts add.
var JSLinks = []string{"/js/1", "/js/2", "/js/3"}

func (s *scriptsSite) serve(w http.ResponseWriter, r *http.Request) {
	switch p := r.URL.Path; {
	case p == "/":
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<!DOCTYPE html><html><head><title>js.test</title>
<script src="/app.js"></script>
<script src="http://tracker.test/t.js"></script>
<script src="/private/secret.js"></script>
</head><body><main><h1>A page built by its scripts</h1>
<p>The links below are added by the page's own script, after it loads.</p>
<a href="/static">a static link</a>
<div id="links"></div></main></body></html>`))
	case p == "/app.js":
		w.Header().Set("Content-Type", "application/javascript")
		_, _ = w.Write([]byte(`document.addEventListener("DOMContentLoaded", function () {
  var box = document.getElementById("links");
  function add(href) { var a = document.createElement("a"); a.href = href; a.textContent = href; box.appendChild(a); }
  add("/js/1"); add("/js/2");
  fetch("/api/links.json").then(function (r) { return r.json(); }).then(function (l) { l.forEach(add); });
});`))
	case p == "/api/links.json":
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`["/js/3"]`))
	case p == "/static" || strings.HasPrefix(p, "/js/") || strings.HasPrefix(p, "/private/"):
		htmlPage(w, doc{title: p, paragraphs: []string{"A page of js.test at " + p + "."}, links: []link{{href: "/", text: "home"}}})
	default:
		http.NotFound(w, r)
	}
}

// page keeps js.test out of the truth: its test says what it expects itself.
func (s *scriptsSite) page(p, q string) pageInfo { return pageInfo{kind: pageOther} }

// ---- tracker.test (with Config.Scripts): the third party js.test loads a script from. -------

type trackerSite struct{ w *Web }

func (s *trackerSite) host() string { return "tracker.test" }

func (s *trackerSite) robots() robotsSpec {
	return robotsSpec{profile: "tracker", status: 404, rules: ruleset{}}
}

func (s *trackerSite) sitemapPages() []string { return nil }

func (s *trackerSite) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/javascript")
	_, _ = w.Write([]byte(`document.body && document.body.appendChild(document.createElement("a")).setAttribute("href", "http://tracker.test/landing");`))
}

func (s *trackerSite) page(p, q string) pageInfo { return pageInfo{kind: pageOther} }
