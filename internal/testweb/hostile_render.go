package testweb

import (
	"fmt"
	"net/http"
	"strings"
)

// ---- jsbad.test (with Config.Scripts): pages that attack a renderer, linked from nowhere. ----
//
//   - /flood: its script requests /x?0 … /x?9999 at once. A renderer that books a slot per
//     request pushes the host's schedule out by hours; a polite one makes a few requests, each
//     inside the page's deadline, and leaves the host's next start as after one page.
//   - /steps: loads the scripts /step/1 … /step/60 one after another before its load event, a
//     slow page to pause its crawl in the middle of.
//   - /alert: alert() and confirm() before its script adds a link (/after-alert).
//   - /bomb: redefines outerHTML to a 200 MB string, then adds a link (/after-bomb).
//   - /away: sends its main frame to /elsewhere (same host) once loaded.
//   - /slowdown: loads /busy, which answers 429 with Retry-After: 20, and once it has answered,
//     /after-busy, which a polite renderer never requests (nor anything else of the host for
//     20 s).
//
// Render-level attacks that need no web (WebRTC UDP, a renderer that exhausts its memory, a
// dead browser) are tested in internal/render against the browser alone.

type hostileRenderSite struct{ w *Web }

func (s *hostileRenderSite) host() string { return "jsbad.test" }

func (s *hostileRenderSite) robots() robotsSpec {
	return robotsSpec{profile: "jsbad", status: 200, body: "User-agent: *\nDisallow:\n", rules: ruleset{}}
}

func (s *hostileRenderSite) sitemapPages() []string { return nil }

// HostileRenderPages are jsbad.test's pages, each an attack on a renderer.
var HostileRenderPages = []string{"/flood", "/steps", "/alert", "/bomb", "/away", "/slowdown"}

func (s *hostileRenderSite) serve(w http.ResponseWriter, r *http.Request) {
	script := ""
	switch p := r.URL.Path; {
	case p == "/flood":
		script = `for (var i = 0; i < 10000; i++) fetch("/x?" + i).catch(function () {});`
	case p == "/steps":
		// Scripts the parser waits for, one after another: the page's load event (and so its
		// render) waits for all 60.
		var b strings.Builder
		for i := 1; i <= 60; i++ {
			fmt.Fprintf(&b, "document.write('<script src=\"/step/%d\"><\\/script>');\n", i)
		}
		script = b.String()
	case p == "/alert":
		script = `alert("hi"); confirm("sure?"); var a = document.createElement("a"); a.href = "/after-alert"; document.body.appendChild(a);`
	case p == "/bomb":
		script = `var huge = function () { return "x".repeat(200 * 1024 * 1024) };
Object.defineProperty(Element.prototype, "outerHTML", {get: huge});
var a = document.createElement("a"); a.href = "/after-bomb"; document.body.appendChild(a);`
	case p == "/away":
		script = `window.addEventListener("load", function () { window.location = "/elsewhere" });`
	case p == "/slowdown":
		// /after-busy is asked for only once /busy has answered (a script inserted by the first
		// one's error handler, before the load event): a renderer that heeds the 429 refuses it.
		script = `var s = document.createElement("script"); s.src = "/busy";
s.onerror = s.onload = function () { var t = document.createElement("script"); t.src = "/after-busy"; document.body.appendChild(t) };
document.body.appendChild(s);`
	case p == "/busy":
		w.Header().Set("Retry-After", "20")
		http.Error(w, "slow down", http.StatusTooManyRequests)
		return
	case p == "/x" || p == "/after-busy":
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{}`))
		return
	case strings.HasPrefix(p, "/step/"):
		w.Header().Set("Content-Type", "application/javascript")
		_, _ = w.Write([]byte(`void 0;`))
		return
	case p == "/after-alert" || p == "/after-bomb" || p == "/elsewhere":
		htmlPage(w, doc{title: p, paragraphs: []string{"A page of jsbad.test at " + p + "."}})
		return
	default:
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write([]byte(`<!DOCTYPE html><html><head><title>jsbad.test` + r.URL.Path + `</title></head><body><main>
<h1>A page that attacks its renderer</h1><p>Nothing here is for a reader.</p></main>
<script>` + script + `</script></body></html>`))
}

// page keeps jsbad.test out of the truth: its test says what it expects itself.
func (s *hostileRenderSite) page(p, q string) pageInfo { return pageInfo{kind: pageOther} }
