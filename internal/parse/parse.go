// Package parse owns HTML extraction: decoding the page's charset to UTF-8, and reading the
// title, the visible text, the links (with <base href> and rel=nofollow), the canonical link,
// the language and the meta robots directives, with bounded work per page.
package parse

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"

	"github.com/trawlerdev/trawler/internal/robots"
)

// MaxTextBytes caps the extracted text of one page.
const MaxTextBytes = 1 << 20

// Link is an anchor: its href as written, and whether the page asks not to follow it.
type Link struct {
	Href     string
	NoFollow bool
	Kind     string // how the page links it (Link*; "" is LinkAnchor)
}

// How a page links a URL, as the link table records it: every kind is a link a browser
// follows or a crawler should, and goes through the one admission path.
const (
	LinkAnchor    = "a"         // <a href>, <area href>
	LinkIframe    = "iframe"    // <iframe src>
	LinkFrame     = "frame"     // <frame src>
	LinkRefresh   = "refresh"   // <meta http-equiv="refresh" content="0; url=…">
	LinkNext      = "next"      // <link rel="next">
	LinkPrev      = "prev"      // <link rel="prev">
	LinkHreflang  = "hreflang"  // <link rel="alternate" hreflang="…">
	LinkCanonical = "canonical" // <link rel="canonical">
	LinkFeedItem  = "feed"      // an RSS or Atom item
	LinkEmbed     = "embed"     // a requisite: a file the page needs to be shown (requisites.go), archived, never followed
)

// Page is what a document yields.
type Page struct {
	Title   string
	Text    string
	Lang    string
	Charset string
	Base    *url.URL // what relative links resolve against: <base href> or the page URL
	Links   []Link
	// Requisites are the files a browser fetches to show the page (requisites.go), as
	// written, at most maxRequisites: archived, never followed.
	Requisites []Requisite
	Canonical  string            // resolved
	Meta       robots.Directives // from <meta name="robots"> and <meta name="<product token>">
	Binary     bool              // the body is not text, whatever the Content-Type said
}

// Parse reads an HTML body fetched from pageURL. At most maxLinks links are returned. token is
// the crawler's robots product token: <meta name="<token>"> (in any case) speaks to it, as
// <meta name="robots"> speaks to every crawler.
func Parse(body []byte, contentType string, pageURL *url.URL, maxLinks, maxRequisites int, token string) (*Page, error) {
	return ParseWith(body, contentType, pageURL, maxLinks, maxRequisites, token, nil)
}

// ParseWith is Parse, and hands visit (if not nil) the parsed tree before it returns: what
// reads more of a page (extraction rules) reads the one tree, not a second parse.
func ParseWith(body []byte, contentType string, pageURL *url.URL, maxLinks, maxRequisites int, token string, visit func(*goquery.Document)) (*Page, error) {
	p := &Page{Base: pageURL}
	if looksBinary(body) {
		p.Binary = true
		return p, nil
	}
	r, name, _ := charset.DetermineEncoding(body, contentType)
	p.Charset = name
	decoded := body
	if name != "utf-8" {
		d, err := r.NewDecoder().Bytes(body)
		if err != nil {
			return nil, fmt.Errorf("parse: decode %s: %w", name, err)
		}
		decoded = d
	}
	// What the page says is stored as text: valid UTF-8 (a page that claims UTF-8 and is not
	// gets U+FFFD for its bad bytes) and no NUL (a stray one is common on the web).
	decoded = bytes.ToValidUTF8(bytes.ReplaceAll(decoded, []byte{0}, nil), []byte("\uFFFD"))
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(decoded))
	if err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	if visit != nil {
		visit(doc)
	}
	p.Title = collapse(doc.FindMatcher(selTitle).First().Text(), 1000)
	p.Lang = strings.TrimSpace(doc.FindMatcher(selHTML).AttrOr("lang", ""))
	if href, ok := doc.FindMatcher(selBase).First().Attr("href"); ok {
		if b, err := pageURL.Parse(strings.TrimSpace(href)); err == nil && (b.Scheme == "http" || b.Scheme == "https") {
			p.Base = b
		}
	}
	token = strings.ToLower(token)
	doc.FindMatcher(selMetaName).Each(func(_ int, m *goquery.Selection) {
		if name := strings.ToLower(strings.TrimSpace(m.AttrOr("name", ""))); name == "robots" || (token != "" && name == token) {
			p.Meta = p.Meta.Merge(robots.ParseList(m.AttrOr("content", "")))
		}
	})
	if href, ok := doc.FindMatcher(selCanonical).First().Attr("href"); ok {
		if c, err := p.Base.Parse(strings.TrimSpace(href)); err == nil {
			p.Canonical = c.String()
		}
	}
	if maxRequisites > 0 { // (a walk of the whole tree: only for a crawl that takes them)
		p.Requisites = requisites(doc, min(maxRequisites, MaxRequisites))
	}
	p.Links = append(p.Links, browserLinks(doc, maxLinks)...)
	doc.FindMatcher(selAnchors).EachWithBreak(func(_ int, a *goquery.Selection) bool {
		if len(p.Links) >= maxLinks {
			return false
		}
		href := strings.TrimSpace(a.AttrOr("href", ""))
		if href == "" || strings.HasPrefix(href, "#") {
			return true
		}
		rel := " " + strings.ToLower(a.AttrOr("rel", "")) + " "
		nofollow := strings.Contains(rel, " nofollow ") || strings.Contains(rel, " ugc ") || strings.Contains(rel, " sponsored ")
		p.Links = append(p.Links, Link{Href: href, NoFollow: nofollow, Kind: LinkAnchor})
		return true
	})
	if p.Lang == "" {
		p.Lang = strings.TrimSpace(doc.FindMatcher(selContentLanguage).First().AttrOr("content", ""))
	}
	p.Text = mainText(doc)
	return p, nil
}

// separators are elements whose boundaries separate words even without white space.
var separators = map[string]bool{
	"p": true, "div": true, "br": true, "li": true, "ul": true, "ol": true, "td": true, "th": true, "tr": true,
	"table": true, "h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true, "a": true, "img": true,
	"section": true, "article": true, "main": true, "aside": true, "blockquote": true, "pre": true, "dd": true,
	"dt": true, "option": true, "button": true, "label": true, "hr": true, "title": true, "body": true,
}

// visibleText appends the text under n, spacing at element boundaries that separate words.
func visibleText(n *html.Node, b *strings.Builder, max int) {
	if b.Len() > max {
		return
	}
	switch n.Type {
	case html.TextNode:
		b.WriteString(n.Data)
		return
	case html.ElementNode:
		if separators[n.Data] {
			b.WriteByte(' ')
			defer b.WriteByte(' ')
		}
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		visibleText(c, b, max)
	}
}

// collapse folds runs of white space to one space and cuts at max bytes (on a rune boundary).
func collapse(s string, max int) string {
	if max <= 0 {
		return ""
	}
	var b strings.Builder
	b.Grow(min(len(s), max))
	space := false
	for i := 0; i < len(s); {
		// (ASCII, most of any page, without decoding a rune or asking unicode)
		r, size := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(s[i:])
		}
		i += size
		if r < utf8.RuneSelf && asciiSpace[r] || r >= utf8.RuneSelf && unicode.IsSpace(r) {
			space = true
			continue
		}
		need := utf8.RuneLen(r) // (an invalid byte is written as U+FFFD, three bytes)
		sep := space && b.Len() > 0
		if sep {
			need++
		}
		space = false
		if b.Len()+need > max {
			break
		}
		if sep {
			b.WriteByte(' ')
		}
		if r < utf8.RuneSelf {
			b.WriteByte(byte(r))
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// asciiSpace is unicode.IsSpace below utf8.RuneSelf.
var asciiSpace = [utf8.RuneSelf]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

// looksBinary reports a body that starts like a known binary format (an image, a PDF, an
// archive) or whose first KiB is more than 5% control bytes (random bytes are ~10%). A stray NUL in a page is
// not enough: broken pages that hold a few are ordinary, and their text is still wanted.
func looksBinary(b []byte) bool {
	if len(b) > 1024 {
		b = b[:1024]
	}
	if len(b) == 0 {
		return false
	}
	if t := http.DetectContentType(b); strings.HasPrefix(t, "image/") || strings.HasPrefix(t, "audio/") ||
		strings.HasPrefix(t, "video/") || strings.HasPrefix(t, "font/") || t == "application/pdf" || t == "application/zip" ||
		t == "application/x-gzip" || t == "application/x-rar-compressed" || t == "application/wasm" || t == "application/vnd.ms-fontobject" {
		return true
	}
	if bytes.HasPrefix(b, []byte{0xfe, 0xff}) || bytes.HasPrefix(b, []byte{0xff, 0xfe}) {
		return false // UTF-16, NULs and all: decoded by its BOM
	}
	ctrl := 0
	for _, c := range b {
		if c < 9 || (c > 13 && c < 32) {
			ctrl++
		}
	}
	return ctrl*20 > len(b)
}

// boilerplate is what main text leaves out: code, navigation, page furniture, forms. Besides
// the elements and roles that say so, the class names the web's templates and documentation
// generators (DocBook's navheader/navfooter, Bootstrap's navbar, breadcrumbs, sidebars, cookie
// banners) give the furniture they draw with plain divs and tables.
const boilerplate = `script, style, noscript, template, svg, nav, header, footer, iframe, head, aside, form, button,
	[role="navigation"], [role="banner"], [role="contentinfo"], [role="search"], [aria-hidden="true"],
	.navheader, .navfooter, .navbar, .breadcrumb, .breadcrumbs, .sidebar, .site-header, .site-footer,
	.cookie-banner, .cookie-consent, .skip-link`

// mainText is the page's readable text without boilerplate: the <main> element (or the only
// <article>, or role=main) when the page marks one and it holds a fair share of the text,
// else the whole body.
func mainText(doc *goquery.Document) string {
	doc.FindMatcher(selBoilerplate).Remove()
	text := func(sel *goquery.Selection) string {
		var b strings.Builder
		for _, n := range sel.Nodes {
			visibleText(n, &b, MaxTextBytes*2)
		}
		return collapse(b.String(), MaxTextBytes)
	}
	all := text(doc.Selection)
	main := doc.FindMatcher(selMain)
	if main.Length() != 1 {
		main = doc.FindMatcher(selArticle)
	}
	if main.Length() == 1 {
		if t := text(main); len(t) >= 200 || len(t)*4 >= len(all) {
			return t
		}
	}
	return all
}
