package parse

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
)

func mustURL(s string) *url.URL { u, _ := url.Parse(s); return u }

func TestParseExtractsEverything(t *testing.T) {
	body := `<!DOCTYPE html><html lang="en"><head><title> Hello
	World </title><base href="/sub/"><link rel="canonical" href="/main">
	<meta name="robots" content="noindex"><style>.x{}</style><script>var a = "<a href='/js'>";</script></head>
	<body><nav><a href="/nav">nav</a></nav><p>Some   <b>visible</b> text.</p>
	<a href="rel.html">r</a><a href="http://other.example/x" rel="nofollow">n</a><a href="#top">t</a>
	<a href="javascript:void(0)">j</a><a rel="ugc" href="/ugc">u</a><footer>foot</footer></body></html>`
	p, err := Parse([]byte(body), "text/html; charset=utf-8", mustURL("http://x.example/dir/page"), 100, MaxRequisites, "trawlerbot")
	if err != nil {
		t.Fatal(err)
	}
	if p.Title != "Hello World" || p.Lang != "en" || !p.Meta.NoIndex || p.Meta.NoFollow {
		t.Errorf("head: %+v", p)
	}
	if p.Base.String() != "http://x.example/sub/" || p.Canonical != "http://x.example/main" {
		t.Errorf("base %s canonical %s", p.Base, p.Canonical)
	}
	if p.Text != "Some visible text. r n t j u" {
		t.Errorf("text = %q", p.Text)
	}
	var hrefs []string
	for _, l := range p.Links {
		hrefs = append(hrefs, l.Href)
		if (l.Href == "http://other.example/x" || l.Href == "/ugc") != l.NoFollow {
			t.Errorf("nofollow wrong on %s", l.Href)
		}
	}
	if strings.Join(hrefs, " ") != "/nav rel.html http://other.example/x javascript:void(0) /ugc" {
		t.Errorf("links = %v", hrefs)
	}
}

func TestParseCharsetsAndBinary(t *testing.T) {
	latin, _ := charmap.ISO8859_1.NewEncoder().String(`<html><head><meta charset="iso-8859-1"><title>café</title></head><body>crème</body></html>`)
	p, err := Parse([]byte(latin), "text/html; charset=iso-8859-1", mustURL("http://x.example/"), 10, MaxRequisites, "trawlerbot")
	if err != nil || p.Title != "café" || p.Text != "crème" || p.Charset != "windows-1252" {
		t.Errorf("latin1: %v %+v", err, p)
	}
	p, _ = Parse([]byte{0x89, 'P', 'N', 'G', 0, 0, 1, 2}, "text/html", mustURL("http://x.example/"), 10, MaxRequisites, "trawlerbot")
	if !p.Binary || len(p.Links) != 0 {
		t.Error("binary not detected")
	}
	random := make([]byte, 4096)
	for i := range random {
		random[i] = byte(i*7919 + i*i*31)
	}
	if p, _ = Parse(random, "text/html", mustURL("http://x.example/"), 10, MaxRequisites, "trawlerbot"); !p.Binary {
		t.Error("random bytes served as HTML not detected")
	}
	// A Latin-1 page with stray NULs and a non-UTF-8 lang is text: decoded, stored without them.
	p, err = Parse([]byte("<html lang=\"fr\xe9\x00\"><title>Caf\xe9\x00</title><body><p>na\xefve\x00 cr\xe8me</p></body></html>"),
		"text/html; charset=iso-8859-1", mustURL("http://x.example/"), 10, MaxRequisites, "trawlerbot")
	if err != nil || p.Binary || p.Title != "Café" || p.Text != "naïve crème" || p.Lang != "fré" {
		t.Errorf("latin1 with NULs: %v %+v", err, p)
	}
	p, _ = Parse([]byte(`<html><head><meta name="robots" content="none"></head><body><a href="/a">a</a></body></html>`), "", mustURL("http://x.example/"), 10, MaxRequisites, "trawlerbot")
	if !p.Meta.NoIndex || !p.Meta.NoFollow {
		t.Error("meta robots none")
	}
}

func TestLinksAreCapped(t *testing.T) {
	body := strings.Repeat(`<a href="/x">x</a>`, 1000)
	p, _ := Parse([]byte(body), "text/html", mustURL("http://x.example/"), 50, MaxRequisites, "trawlerbot")
	if len(p.Links) != 50 {
		t.Errorf("%d links", len(p.Links))
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`<html><base href="//x"><a href="/a" rel=nofollow>`), "text/html")
	f.Add([]byte("<meta charset=shift_jis><title>\x82\xa0</title>"), "")
	f.Add([]byte("<html lang=\"fr\xe9\x00\"><title>Caf\xe9\x00</title><p>na\xefve"), "text/html; charset=iso-8859-1")
	f.Add([]byte("<title>\xff\xfe bad utf-8</title>"), "text/html; charset=utf-8")
	f.Fuzz(func(t *testing.T, body []byte, ct string) {
		start := time.Now()
		p, err := Parse(body, ct, mustURL("http://x.example/"), 100, MaxRequisites, "trawlerbot")
		if d, bound := time.Since(start), 250*time.Millisecond+time.Duration(len(body))*time.Microsecond; d > bound {
			t.Fatalf("%d bytes took %v (bound %v)", len(body), d, bound)
		}
		if err != nil {
			return
		}
		if len(p.Links) > 100 {
			t.Fatal("link cap exceeded")
		}
		for _, s := range []string{p.Title, p.Text, p.Lang, p.Charset} { // all of it can be stored
			if !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
				t.Fatalf("not storable: %q", s)
			}
		}
	})
}

func TestMainTextLeavesBoilerplateOut(t *testing.T) {
	article := strings.Repeat("The committee approved the budget after a long debate. ", 6)
	body := `<html><head><meta http-equiv="Content-Language" content="de"><title>t</title></head><body>
	<div role="navigation">Home | News | Sport</div><aside>Related: ten tricks</aside>
	<main><h1>Budget passed</h1><p>` + article + `</p><form><button>Subscribe</button></form></main>
	<div class="sidebar">Most read today</div></body></html>`
	p, err := Parse([]byte(body), "text/html", mustURL("http://x.example/news/1"), 100, MaxRequisites, "trawlerbot")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(p.Text, "Budget passed The committee") || strings.Contains(p.Text, "Most read") ||
		strings.Contains(p.Text, "Subscribe") || strings.Contains(p.Text, "Sport") || strings.Contains(p.Text, "Related") {
		t.Errorf("main text = %q", p.Text)
	}
	if p.Lang != "de" {
		t.Errorf("language hint %q, want the Content-Language meta's de", p.Lang)
	}
	// A <main> holding a sliver of the page is not trusted over the body.
	p, _ = Parse([]byte(`<body><main>Hi</main><p>`+article+`</p></body>`), "text/html", mustURL("http://x.example/"), 10, MaxRequisites, "trawlerbot")
	if !strings.Contains(p.Text, "committee") {
		t.Errorf("text = %q", p.Text)
	}
}

// A 10 MB page (the default maxBodyBytes) of text and links: parse work grows linearly with the
// page, links stop at the cap.
func BenchmarkParse10MB(b *testing.B) {
	var page strings.Builder
	page.WriteString("<html><head><title>big</title></head><body><main>")
	for i := 0; page.Len() < 10<<20; i++ {
		fmt.Fprintf(&page, "<p>Paragraph %d of a long page, with some words to index. <a href=\"/p/%d?x=%d\">link %d</a></p>\n", i, i, i%7, i)
	}
	page.WriteString("</main></body></html>")
	body := []byte(page.String())
	b.SetBytes(int64(len(body)))
	b.ResetTimer()
	for range b.N {
		p, err := Parse(body, "text/html", mustURL("http://x.example/"), 2000, MaxRequisites, "trawlerbot")
		if err != nil || len(p.Links) != 2000 {
			b.Fatalf("%v, %d links", err, len(p.Links))
		}
	}
}

// <meta name="<product token>"> speaks to the crawler whose token it names, and to no other.
func TestMetaRobotsByProductToken(t *testing.T) {
	body := []byte(`<html><head><meta name="NewsBot" content="noindex"><meta name="googlebot" content="nofollow">
		<meta name="robots" content="noarchive"></head><body><a href="/a">a</a></body></html>`)
	for token, want := range map[string]string{"newsbot": "noindex,noarchive", "trawlerbot": "noarchive", "googlebot": "nofollow,noarchive"} {
		p, err := Parse(body, "text/html", mustURL("http://x.example/"), 10, MaxRequisites, strings.ToUpper(token))
		if err != nil || p.Meta.String() != want {
			t.Errorf("token %s: %q %v, want %q", token, p.Meta.String(), err, want)
		}
	}
}

// Furniture drawn with plain divs and tables (DocBook's navheader, Bootstrap's navbar,
// breadcrumbs, sidebars) is left out of the main text, as <nav> is.
func TestFurnitureByClassIsNotMainText(t *testing.T) {
	body := `<html><body><div class="navheader"><table><tr><td><a href="/p">Prev</a> Up Home Next</td></tr></table></div>
		<div class="navbar">Products Pricing Login</div><ol class="breadcrumb"><li>Docs</li><li>SQL</li></ol>
		<div class="sidebar">Table of Contents</div>
		<div class="sect1"><h2>Joins Between Tables</h2><p>Queries can access multiple tables at once.</p></div>
		<div class="navfooter">Prev Up Home Next</div></body></html>`
	p, err := Parse([]byte(body), "text/html", mustURL("http://x.example/"), 10, MaxRequisites, "trawlerbot")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.Text, "Queries can access multiple tables at once.") {
		t.Errorf("content lost: %q", p.Text)
	}
	for _, furniture := range []string{"Prev", "Pricing", "SQL", "Table of Contents"} {
		if strings.Contains(p.Text, furniture) {
			t.Errorf("%q kept in %q", furniture, p.Text)
		}
	}
	if len(p.Links) != 1 {
		t.Errorf("links %v: the navigation's links are still links", p.Links)
	}
}

// A small page (about 2 KB: a header, a nav, an article of ten
// paragraphs with links, a footer): the fixed cost of a parse, selectors included.
func BenchmarkParsePage(b *testing.B) {
	var page strings.Builder
	page.WriteString(`<html lang="en"><head><title>A page</title><meta name="description" content="d"><link rel="canonical" href="/a">
		<link rel="stylesheet" href="/s.css"><script src="/a.js"></script></head><body><header><nav>`)
	for i := range 12 {
		fmt.Fprintf(&page, `<a href="/section/%d">Section %d</a> `, i, i)
	}
	page.WriteString(`</nav></header><article><h1>Title</h1>`)
	for i := range 10 {
		fmt.Fprintf(&page, `<p>Paragraph %d of the article, with words enough to be read as text, <a href="/p/%d">a link</a> and <img src="/i/%d.png"> an image.</p>`, i, i, i)
	}
	page.WriteString(`</article><footer><a href="/about">About</a> <a href="/contact">Contact</a></footer></body></html>`)
	body := []byte(page.String())
	b.SetBytes(int64(len(body)))
	b.ResetTimer()
	for range b.N {
		if _, err := Parse(body, "text/html", mustURL("http://x.example/"), 2000, MaxRequisites, "trawlerbot"); err != nil {
			b.Fatal(err)
		}
	}
}
