package testweb

import (
	"fmt"
	"net/http"
	"strings"
)

// ---- style.test and cdn.test: pages that need their requisites (Config.Requisites). ---------
//
// style.test's two pages need a stylesheet that imports another and names a font and a
// background image, responsive images (srcset, <picture>), an icon, an <object> document, and
// a script on cdn.test. RequisiteURLs lists every file a browser fetches to show them: an
// archive that replays the pages holds each. The <object>'s document links NeverFollowed: a
// requisite is archived, never read for links. Seed http://style.test/.

// RequisiteURLs are the files style.test's pages need, on style.test and cdn.test.
var RequisiteURLs = []string{
	"http://style.test/css/site.css", "http://style.test/css/base.css", "http://style.test/fonts/body.woff2",
	"http://style.test/img/bg.png", "http://style.test/img/h1.png", "http://style.test/img/a.png",
	"http://style.test/img/a-2x.png", "http://style.test/img/p.webp", "http://style.test/img/p.jpg",
	"http://style.test/favicon.ico", "http://style.test/embed.html", "http://cdn.test/lib.js",
}

// NeverFollowed is linked only from a requisite (style.test's <object> document).
const NeverFollowed = "http://style.test/never-followed"

type styleSite struct{ w *Web }

func (s *styleSite) host() string           { return "style.test" }
func (s *styleSite) robots() robotsSpec     { return allowAll }
func (s *styleSite) sitemapPages() []string { return nil }

// page keeps style.test out of the truth: its test says what it expects itself.
func (s *styleSite) page(string, string) pageInfo { return pageInfo{kind: pageOther} }

const stylePage = `<!DOCTYPE html><html><head><title>%s</title>
<link rel="stylesheet" href="/css/site.css"><link rel="icon" href="/favicon.ico">
<script src="http://cdn.test/lib.js"></script>
</head><body><h1>%s</h1>
<img src="/img/a.png" srcset="/img/a-2x.png 2x" alt="a">
<picture><source srcset="/img/p.webp" type="image/webp"><img src="/img/p.jpg" alt="p"></picture>
<object data="/embed.html"></object>
<p>A page that needs its stylesheets, images, font and scripts to look as it does.</p>
%s</body></html>`

// png is a 1×1 PNG.
var png = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")

func (s *styleSite) serve(w http.ResponseWriter, r *http.Request) {
	write := func(ct string, body []byte) {
		w.Header().Set("Content-Type", ct)
		_, _ = w.Write(body)
	}
	switch p := r.URL.Path; {
	case p == "/":
		write("text/html; charset=utf-8", []byte(fmt.Sprintf(stylePage, "style.test", "style.test", `<a href="/page2">the second page</a>`)))
	case p == "/page2":
		write("text/html; charset=utf-8", []byte(fmt.Sprintf(stylePage, "page 2", "page 2", `<a href="/">home</a>`)))
	case p == "/css/site.css":
		write("text/css", []byte(`@import url("/css/base.css");
@font-face { font-family: "Body"; src: url(/fonts/body.woff2) format("woff2"); }
body { font-family: "Body", serif; background: url('/img/bg.png') repeat; }`))
	case p == "/css/base.css":
		write("text/css", []byte(`h1 { background-image: url(../img/h1.png); }`))
	case p == "/fonts/body.woff2":
		write("font/woff2", []byte("wOF2\x00\x01\x00\x00fake font bytes"))
	case strings.HasPrefix(p, "/img/") || p == "/favicon.ico":
		write("image/png", png)
	case p == "/embed.html":
		write("text/html; charset=utf-8", []byte(`<!DOCTYPE html><html><body><a href="/never-followed">not a link of the page</a></body></html>`))
	case p == "/never-followed":
		htmlPage(w, doc{title: "never followed", paragraphs: []string{"Linked only from a requisite."}})
	default:
		http.NotFound(w, r)
	}
}

type cdnSite struct{ w *Web }

func (s *cdnSite) host() string                 { return "cdn.test" }
func (s *cdnSite) robots() robotsSpec           { return allowAll }
func (s *cdnSite) sitemapPages() []string       { return nil }
func (s *cdnSite) page(string, string) pageInfo { return pageInfo{kind: pageOther} }

func (s *cdnSite) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/lib.js" {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/javascript")
	_, _ = w.Write([]byte(`window.lib = { linked: "http://cdn.test/not-a-link" };`))
}
