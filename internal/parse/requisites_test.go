package parse

import (
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/trawlerdev/trawler/internal/crawl"
)

// A page's requisites are every file a browser fetches to show it, by kind, once each and in
// document order: images (src, srcset, picture sources), stylesheets and what their inline
// and <style> CSS names, scripts, icons, media, objects; never a data: URL, a fragment or an
// anchor's link.
func TestRequisitesAreWhatABrowserFetches(t *testing.T) {
	html := `<html><head>
<link rel="stylesheet" href="/s.css"><link rel="icon" href="/favicon.ico"><link rel="next" href="/page2">
<link rel="preload" as="font" href="/f.woff2" crossorigin><link rel="modulepreload" href="/m.js">
<style>@import url("/print.css"); body { background: url('/bg.png') } @font-face { font-family: X; src: url(/x.woff2) format("woff2") }</style>
<script src="https://cdn.test/lib.js"></script><script>var inline = 1</script>
</head><body>
<a href="/about">about</a>
<img src="/a.png" srcset="/a-2x.png 2x, /a-3x.png 3x">
<img src="data:image/png;base64,AAAA">
<picture><source srcset="/p.webp 480w, /p-l.webp 1080w" type="image/webp"><img src="/p.jpg"></picture>
<video src="/v.mp4" poster="/v.jpg"><track src="/v.vtt"></video>
<div style="background-image: url(/div.png)"></div>
<object data="/o.svg"></object><embed src="/e.swf">
<svg><image href="/svg.png"></image><use href="#local"></use><use href="/sprite.svg#i"></use></svg>
<img src="/a.png">
</body></html>`
	base, _ := url.Parse("http://site.test/")
	p, err := Parse([]byte(html), "text/html", base, 100, MaxRequisites, "trawlerbot")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	var order []string
	for _, r := range p.Requisites {
		if _, dup := got[r.Href]; dup {
			t.Errorf("%s twice", r.Href)
		}
		got[r.Href] = r.Kind
		order = append(order, r.Href)
	}
	want := map[string]string{
		"/s.css": crawl.RequisiteStyle, "/favicon.ico": crawl.RequisiteIcon, "/f.woff2": crawl.RequisiteFont, "/m.js": crawl.RequisiteScript,
		"/print.css": crawl.RequisiteStyle, "/bg.png": crawl.RequisiteImage, "/x.woff2": crawl.RequisiteFont, "https://cdn.test/lib.js": crawl.RequisiteScript,
		"/a.png": crawl.RequisiteImage, "/a-2x.png": crawl.RequisiteImage, "/a-3x.png": crawl.RequisiteImage,
		"/p.webp": crawl.RequisiteImage, "/p-l.webp": crawl.RequisiteImage, "/p.jpg": crawl.RequisiteImage,
		"/v.mp4": crawl.RequisiteMedia, "/v.jpg": crawl.RequisiteImage, "/v.vtt": crawl.RequisiteMedia, "/div.png": crawl.RequisiteImage,
		"/o.svg": crawl.RequisiteObject, "/e.swf": crawl.RequisiteObject, "/svg.png": crawl.RequisiteImage, "/sprite.svg#i": crawl.RequisiteObject,
	}
	for href, kind := range want {
		if got[href] != kind {
			t.Errorf("%s: kind %q, want %q", href, got[href], kind)
		}
	}
	for href := range got {
		if _, ok := want[href]; !ok {
			t.Errorf("%s is not a requisite", href)
		}
	}
	if i, j := slices.Index(order, "/s.css"), slices.Index(order, "/a.png"); i < 0 || j < i {
		t.Errorf("not in document order: %v", order)
	}
	// The cap holds.
	if p := requisitesOf(t, html, 3); len(p) != 3 {
		t.Errorf("capped at 3: %d", len(p))
	}
}

func requisitesOf(t *testing.T, html string, max int) []Requisite {
	t.Helper()
	doc, err := docOf(html)
	if err != nil {
		t.Fatal(err)
	}
	return requisites(doc, max)
}

// A stylesheet's requisites: its imports, its fonts as fonts, every other url(), quoted or
// not; comments and data: URLs are not.
func TestCSSRefs(t *testing.T) {
	css := `@import "base.css"; @import url(theme.css) screen;
/* url(/commented.png) */
@font-face { font-family: "F"; src: url("fonts/f.woff2") format("woff2"), url(fonts/f.woff) format("woff"); }
.a { background: url( 'img/a.png' ) } .b { background: url(data:image/gif;base64,R0lG) } .c { cursor: url(c.cur), auto }`
	var got []string
	kinds := map[string]string{}
	for _, r := range CSSRefs(css, 100) {
		got = append(got, r.Href)
		kinds[r.Href] = r.Kind
	}
	want := []string{"base.css", "theme.css", "fonts/f.woff2", "fonts/f.woff", "img/a.png", "c.cur"}
	if !slices.Equal(got, want) {
		t.Errorf("refs %v, want %v", got, want)
	}
	if kinds["fonts/f.woff"] != crawl.RequisiteFont || kinds["base.css"] != crawl.RequisiteStyle || kinds["img/a.png"] != crawl.RequisiteImage {
		t.Errorf("kinds %v", kinds)
	}
}

// srcset candidates split on the commas between them, not those inside a URL or inside a
// descriptor's parentheses.
func TestSplitSrcset(t *testing.T) {
	for set, want := range map[string][]string{
		"a.png 1x, b.png 2x":                 {"a.png", "b.png"},
		"s.jpg 480w,l.jpg 1080w":             {"s.jpg", "l.jpg"},
		"one.png":                            {"one.png"},
		"/img?w=1,2 1x, /img?w=3 2x":         {"/img?w=1,2", "/img?w=3"},
		"  a.png  ,  b.png  ":                {"a.png", "b.png"},
		"":                                   nil,
		"a.png 1x (future, thing), b.png 2x": {"a.png", "b.png"},
		"https://x.test/a.jpg 100w, https://x.test/b.jpg 200w": {"https://x.test/a.jpg", "https://x.test/b.jpg"},
	} {
		if got := splitSrcset(set); !slices.Equal(got, want) {
			t.Errorf("%q: %q, want %q", set, got, want)
		}
	}
}

func docOf(html string) (*goquery.Document, error) {
	return goquery.NewDocumentFromReader(strings.NewReader(html))
}
