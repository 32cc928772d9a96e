package parse

import (
	"regexp"
	"strings"

	"github.com/PuerkitoBio/goquery"
	"github.com/trawlerdev/trawler/internal/crawl"
)

// A page's requisites are the files a browser fetches to show it — what `wget
// --page-requisites` takes and Heritrix calls embeds: images, stylesheets, scripts, icons,
// fonts, media. They are archived so the page replays as it looked; they are never followed
// as links, and a stylesheet among them is read only for its own requisites (CSSRefs).

// Requisite is one file a page (or a stylesheet) needs, as written, and of which kind.
type Requisite struct {
	Href string
	Kind string // crawl.RequisiteStyle, crawl.RequisiteScript, …
}

// MaxRequisites bounds what one page or stylesheet yields (a crawl's per-page cap is lower).
const MaxRequisites = 1000

// requisites lists the page's requisites in document order, without duplicates, at most max.
func requisites(doc *goquery.Document, max int) []Requisite {
	r := &reqList{max: max, seen: map[string]bool{}}
	doc.FindMatcher(selRequisites).
		EachWithBreak(func(_ int, s *goquery.Selection) bool {
			switch name := goquery.NodeName(s); name {
			case "img", "input":
				r.add(s.AttrOr("src", ""), crawl.RequisiteImage)
				r.srcset(s.AttrOr("srcset", ""), crawl.RequisiteImage)
			case "source":
				kind := crawl.RequisiteImage // <picture><source srcset>
				if p := goquery.NodeName(s.Parent()); p == "video" || p == "audio" {
					kind = crawl.RequisiteMedia
				}
				r.add(s.AttrOr("src", ""), kind)
				r.srcset(s.AttrOr("srcset", ""), kind)
			case "video", "audio":
				r.add(s.AttrOr("src", ""), crawl.RequisiteMedia)
				r.add(s.AttrOr("poster", ""), crawl.RequisiteImage)
			case "track":
				r.add(s.AttrOr("src", ""), crawl.RequisiteMedia)
			case "script":
				r.add(s.AttrOr("src", ""), crawl.RequisiteScript)
			case "link":
				r.link(s)
			case "object":
				r.add(s.AttrOr("data", ""), crawl.RequisiteObject)
			case "embed":
				r.add(s.AttrOr("src", ""), crawl.RequisiteObject)
			case "image", "use": // SVG: href, or the older xlink:href
				href := s.AttrOr("href", s.AttrOr("xlink:href", ""))
				if name == "use" && strings.HasPrefix(strings.TrimSpace(href), "#") {
					break // a symbol of this document
				}
				kind := crawl.RequisiteImage
				if name == "use" {
					kind = crawl.RequisiteObject
				}
				r.add(href, kind)
			case "style":
				r.css(s.Text())
			}
			if style, ok := s.Attr("style"); ok && goquery.NodeName(s) != "style" {
				r.css(style)
			}
			return !r.full()
		})
	return r.out
}

// link takes a <link>'s href when its rel names a file the page needs.
func (r *reqList) link(s *goquery.Selection) {
	href := s.AttrOr("href", "")
	for _, rel := range strings.Fields(strings.ToLower(s.AttrOr("rel", ""))) {
		switch rel {
		case "stylesheet":
			r.add(href, crawl.RequisiteStyle)
		case "icon", "apple-touch-icon", "apple-touch-icon-precomposed", "mask-icon", "manifest":
			r.add(href, crawl.RequisiteIcon)
		case "modulepreload":
			r.add(href, crawl.RequisiteScript)
		case "preload":
			r.add(href, preloadKind(s.AttrOr("as", "")))
		default:
			continue
		}
		r.srcset(s.AttrOr("imagesrcset", ""), crawl.RequisiteImage)
		return
	}
}

// preloadKind is the kind of a <link rel=preload as=…>.
func preloadKind(as string) string {
	switch strings.ToLower(strings.TrimSpace(as)) {
	case "style":
		return crawl.RequisiteStyle
	case "script", "worker":
		return crawl.RequisiteScript
	case "font":
		return crawl.RequisiteFont
	case "audio", "video", "track":
		return crawl.RequisiteMedia
	}
	return crawl.RequisiteImage
}

// CSSRefs lists what a stylesheet (or a style attribute, or a <style> block) needs: its
// @import files and its url()s, fonts where an @font-face names them, at most max.
func CSSRefs(css string, max int) []Requisite {
	r := &reqList{max: max, seen: map[string]bool{}}
	r.css(css)
	return r.out
}

// reqList collects requisites once each, in order, up to max.
type reqList struct {
	max  int
	seen map[string]bool
	out  []Requisite
}

func (r *reqList) full() bool { return len(r.out) >= r.max }

func (r *reqList) add(href, kind string) {
	href = strings.TrimSpace(href)
	lower := strings.ToLower(href)
	if href == "" || r.full() || r.seen[href] || strings.HasPrefix(href, "#") ||
		strings.HasPrefix(lower, "data:") || strings.HasPrefix(lower, "javascript:") || strings.HasPrefix(lower, "about:") ||
		strings.HasPrefix(lower, "blob:") {
		return
	}
	r.seen[href] = true
	r.out = append(r.out, Requisite{Href: href, Kind: kind})
}

// srcset takes each candidate of a srcset ("a.png 1x, b.png 2x"; "s.jpg 480w, l.jpg 1080w").
// A URL may hold commas; candidates are separated by a comma after whitespace or a descriptor.
func (r *reqList) srcset(set, kind string) {
	for _, c := range splitSrcset(set) {
		r.add(c, kind)
	}
}

func splitSrcset(set string) []string {
	var out []string
	for s := strings.TrimSpace(set); s != ""; {
		s = strings.TrimLeft(s, " \t\n\r\f,")
		end := strings.IndexAny(s, " \t\n\r\f")
		if end < 0 {
			end = len(s)
		}
		u := s[:end]
		s = s[end:]
		if strings.HasSuffix(u, ",") { // "a.png,b.png": no descriptor
			u = strings.TrimRight(u, ",")
		} else {
			s = afterDescriptor(s)
		}
		if u != "" {
			out = append(out, u)
		}
	}
	return out
}

// afterDescriptor skips an image candidate's descriptors up to the comma that ends them: a
// comma inside parentheses is the descriptor's own (HTML's srcset parsing).
func afterDescriptor(s string) string {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth = max(depth-1, 0)
		case ',':
			if depth == 0 {
				return s[i+1:]
			}
		}
	}
	return ""
}

var (
	cssComment   = regexp.MustCompile(`(?s)/\*.*?\*/`)
	cssImport    = regexp.MustCompile(`(?i)@import\s+(?:url\(\s*)?(?:"([^"]*)"|'([^']*)'|([^\s;)"']+))`)
	cssURL       = regexp.MustCompile(`(?i)url\(\s*(?:"([^"]*)"|'([^']*)'|([^)"'\s]*))\s*\)`)
	cssFontFace  = regexp.MustCompile(`(?is)@font-face\s*\{[^}]*\}`)
	maxCSSLength = 2 << 20 // what of one stylesheet is read for its requisites
)

// css takes a stylesheet's requisites: @import first, then @font-face sources as fonts, then
// every other url().
func (r *reqList) css(css string) {
	if len(css) > maxCSSLength {
		css = css[:maxCSSLength]
	}
	css = cssComment.ReplaceAllString(css, "")
	r.each(cssImport, css, crawl.RequisiteStyle)
	for _, face := range cssFontFace.FindAllString(css, 64) {
		r.each(cssURL, face, crawl.RequisiteFont)
	}
	r.each(cssURL, css, crawl.RequisiteImage) // (an @import url(…) or a font's was taken above)
}

// each adds what re's first group that matched names, match by match, until the list is full:
// a stylesheet of a million url()s costs what its first few hundred matches cost.
func (r *reqList) each(re *regexp.Regexp, s string, kind string) {
	for !r.full() {
		m := re.FindStringSubmatchIndex(s)
		if m == nil {
			return
		}
		for g := 1; 2*g+1 < len(m); g++ {
			if m[2*g] >= 0 {
				r.add(s[m[2*g]:m[2*g+1]], kind)
				break
			}
		}
		s = s[max(m[1], 1):] // (every pattern here matches at least its keyword)
	}
}
