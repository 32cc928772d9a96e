package parse

import (
	"strings"

	"github.com/PuerkitoBio/goquery"
)

// browserLinks are the links of a page beyond its anchors, in document order by kind: frame
// sources (a browser loads them), a meta refresh's target (a browser goes there), rel=next and
// rel=prev (a paginated series), and hreflang alternates (the page in other languages); at
// most maxLinks.
func browserLinks(doc *goquery.Document, maxLinks int) []Link {
	var out []Link
	add := func(href, kind string) bool {
		href = strings.TrimSpace(href)
		if href == "" || strings.HasPrefix(href, "#") || strings.HasPrefix(strings.ToLower(href), "about:") {
			return len(out) < maxLinks
		}
		out = append(out, Link{Href: href, Kind: kind})
		return len(out) < maxLinks
	}
	if maxLinks <= 0 {
		return nil
	}
	more := true
	doc.FindMatcher(selMetaEquiv).EachWithBreak(func(_ int, m *goquery.Selection) bool {
		if !strings.EqualFold(strings.TrimSpace(m.AttrOr("http-equiv", "")), "refresh") {
			return true
		}
		if target := refreshTarget(m.AttrOr("content", "")); target != "" {
			more = add(target, LinkRefresh)
		}
		return more
	})
	for _, f := range []struct {
		sel  goquery.Matcher
		kind string
	}{{selIframe, LinkIframe}, {selFrame, LinkFrame}} {
		if !more {
			break
		}
		doc.FindMatcher(f.sel).EachWithBreak(func(_ int, e *goquery.Selection) bool {
			more = add(e.AttrOr("src", ""), f.kind)
			return more
		})
	}
	if more {
		doc.FindMatcher(selLinkRel).EachWithBreak(func(_ int, l *goquery.Selection) bool {
			rel := " " + strings.ToLower(l.AttrOr("rel", "")) + " "
			href := l.AttrOr("href", "")
			switch {
			case strings.Contains(rel, " next "):
				more = add(href, LinkNext)
			case strings.Contains(rel, " prev ") || strings.Contains(rel, " previous "):
				more = add(href, LinkPrev)
			case strings.Contains(rel, " alternate ") && strings.TrimSpace(l.AttrOr("hreflang", "")) != "":
				more = add(href, LinkHreflang)
			}
			return more
		})
	}
	return out
}

// refreshTarget is the URL of a meta refresh's content ("5; url=/next", "0;URL='/x'"), or ""
// when it only reloads the page.
func refreshTarget(content string) string {
	_, rest, ok := strings.Cut(content, ";")
	if !ok {
		_, rest, ok = strings.Cut(content, ",") // an old spelling
		if !ok {
			return ""
		}
	}
	rest = strings.TrimSpace(rest)
	if len(rest) < 3 || !strings.EqualFold(rest[:3], "url") {
		return ""
	}
	rest = strings.TrimSpace(rest[3:])
	if !strings.HasPrefix(rest, "=") {
		return ""
	}
	rest = strings.TrimSpace(rest[1:])
	if len(rest) >= 2 && (rest[0] == '\'' || rest[0] == '"') {
		if end := strings.IndexByte(rest[1:], rest[0]); end >= 0 {
			rest = rest[1 : 1+end]
		}
	}
	return strings.TrimSpace(rest)
}
