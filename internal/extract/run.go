package extract

import (
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/PuerkitoBio/goquery"
	"github.com/antchfx/htmlquery"
	"github.com/antchfx/xpath"

	"github.com/trawlerdev/trawler/internal/crawl"
)

// MaxResultBytes bounds what one page's rules keep in all: past it, values are dropped and
// the rule is marked truncated (its "_truncated" key).
const MaxResultBytes = 256 << 10

// maxStructured bounds the JSON-LD objects and the OpenGraph and meta entries kept a page.
const (
	maxJSONLD    = 20
	maxMetaTags  = 100
	maxJSONBytes = 64 << 10 // one JSON-LD script read
)

// Result is what a page's rules found: per rule that matched, per field, a string (or, with
// all, a list of strings); "jsonld" a list of objects, "opengraph" and "meta" maps. A field
// with no match is absent.
type Result map[string]map[string]any

// Run runs the rules that match pageURL on the page's parsed tree. nil when none matched.
func (rs *Rules) Run(pageURL string, doc *goquery.Document) Result {
	if rs == nil || doc == nil || len(doc.Nodes) == 0 {
		return nil
	}
	var out Result
	budget := MaxResultBytes
	for _, r := range rs.rules {
		if !r.match.MatchString(pageURL) {
			continue
		}
		got := map[string]any{}
		keep := func(name string, v any, size int) {
			if size > budget {
				got["_truncated"] = true
				return
			}
			budget -= size
			got[name] = v
		}
		for _, f := range r.fields {
			values := f.values(doc)
			switch {
			case len(values) == 0:
			case f.all:
				keep(f.name, values, sizeOf(values))
			default:
				keep(f.name, values[0], len(values[0]))
			}
		}
		if r.jsonld {
			if objs := jsonLD(doc); len(objs) > 0 {
				size := 0
				for _, o := range objs {
					size += len(o)
				}
				keep("jsonld", objs, size)
			}
		}
		if r.og {
			if m := metaMap(doc, "meta[property^='og:']", "property"); len(m) > 0 {
				keep("opengraph", m, mapSize(m))
			}
		}
		if r.metaTag {
			if m := metaMap(doc, "meta[name][content]", "name"); len(m) > 0 {
				keep("meta", m, mapSize(m))
			}
		}
		if out == nil {
			out = Result{}
		}
		out[r.name] = got
	}
	return out
}

// values are the field's matches, text or attribute, whitespace collapsed, each capped: the
// first only unless all.
func (f field) values(doc *goquery.Document) []string {
	limit := 1
	if f.all {
		limit = crawl.MaxExtractValues
	}
	var out []string
	add := func(v string) bool {
		if v = clip(collapse(v), f.cap); v != "" {
			out = append(out, v)
		}
		return len(out) < limit
	}
	if f.css != nil {
		doc.FindMatcher(f.css).EachWithBreak(func(_ int, s *goquery.Selection) bool {
			if f.attr != "" {
				v, ok := s.Attr(f.attr)
				return !ok || add(v)
			}
			return add(s.Text())
		})
		return out
	}
	// An XPath expression is a node set, or a string, number or boolean (string(//h1)).
	switch v := f.xp.Evaluate(htmlquery.CreateXPathNavigator(doc.Nodes[0])).(type) {
	case *xpath.NodeIterator:
		for v.MoveNext() {
			nav := v.Current()
			var s string
			if n, ok := nav.(*htmlquery.NodeNavigator); ok && f.attr != "" {
				s = htmlquery.SelectAttr(n.Current(), f.attr)
			} else {
				s = nav.Value() // an element's inner text, an attribute's or a text node's value
			}
			if !add(s) {
				break
			}
		}
	case string:
		add(v)
	case float64, bool:
		b, _ := json.Marshal(v)
		add(string(b))
	}
	return out
}

// jsonLD is the page's JSON-LD: each script's object (or each of its array), as parsed JSON;
// a script that is not JSON is skipped.
func jsonLD(doc *goquery.Document) []json.RawMessage {
	var out []json.RawMessage
	doc.Find(`script[type="application/ld+json"]`).EachWithBreak(func(_ int, s *goquery.Selection) bool {
		text := strings.TrimSpace(s.Text())
		if len(text) > maxJSONBytes || !json.Valid([]byte(text)) {
			return true
		}
		if strings.HasPrefix(text, "[") {
			var list []json.RawMessage
			if json.Unmarshal([]byte(text), &list) == nil {
				for _, o := range list {
					if len(out) < maxJSONLD {
						out = append(out, o)
					}
				}
			}
		} else {
			out = append(out, json.RawMessage(text))
		}
		return len(out) < maxJSONLD
	})
	return out
}

// metaMap reads meta elements by their key attribute (property or name), the first of each
// key, capped.
func metaMap(doc *goquery.Document, selector, key string) map[string]string {
	m := map[string]string{}
	doc.Find(selector).EachWithBreak(func(_ int, s *goquery.Selection) bool {
		k := clip(strings.TrimSpace(s.AttrOr(key, "")), 200)
		if k == "" {
			return true
		}
		if _, seen := m[k]; !seen {
			m[k] = clip(collapse(s.AttrOr("content", "")), crawl.DefaultExtractBytes)
		}
		return len(m) < maxMetaTags
	})
	return m
}

func sizeOf(vs []string) int {
	n := 0
	for _, v := range vs {
		n += len(v)
	}
	return n
}

func mapSize(m map[string]string) int {
	n := 0
	for k, v := range m {
		n += len(k) + len(v)
	}
	return n
}

// collapse trims a value and joins its whitespace runs into single spaces.
func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

// clip cuts s to at most n bytes at a rune boundary, valid UTF-8.
func clip(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
