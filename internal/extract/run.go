package extract

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/PuerkitoBio/goquery"
	"github.com/antchfx/htmlquery"
	"github.com/antchfx/xpath"
	"golang.org/x/net/html"

	"github.com/trawlerdev/trawler/internal/crawl"
)

// MaxResultBytes bounds what one page's rules keep in all (values and names as encoded):
// past it, values are dropped and the rule is marked truncated (its "_truncated" key).
const MaxResultBytes = crawl.MaxExtractPageBytes

// A page past these is not extracted (its rules' results say "_skipped"): selectors that
// compare siblings (nth-child, following-sibling) cost the square of a sibling run, and a
// hostile page can hold a million elements.
const (
	maxElements = 200_000
	maxSiblings = 20_000
	visitFactor = 10 // matches visited per value kept: empty matches count too
)

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
	var heads *structured // read on first need, for every rule of the page
	budget := MaxResultBytes
	tooBig := ""
	for _, r := range rs.rules {
		if !r.match.MatchString(pageURL) {
			continue
		}
		if out == nil {
			out = Result{}
			tooBig = oversized(doc)
		}
		got := map[string]any{}
		out[r.name] = got
		if tooBig != "" {
			got["_skipped"] = tooBig
			continue
		}
		keep := func(name string, v any, size int) {
			size += len(name) + 8 // its key and punctuation, as encoded
			if size > budget {
				got["_truncated"] = true
				return
			}
			budget -= size
			got[name] = v
		}
		for _, f := range r.fields {
			values, err := f.safeValues(doc)
			if err != nil { // (an XPath function given the wrong kind of value by the page)
				failed, _ := got["_failed"].([]string)
				got["_failed"] = append(failed, f.name+": "+clip(err.Error(), 200))
				continue
			}
			switch {
			case len(values) == 0:
			case f.all:
				keep(f.name, values, sizeOf(values))
			default:
				keep(f.name, values[0], len(values[0]))
			}
		}
		if (r.jsonld || r.og || r.metaTag) && heads == nil {
			heads = structuredOf(doc)
		}
		if r.jsonld {
			if objs := jsonLD(heads.scripts); len(objs) > 0 {
				size := 0
				for _, o := range objs {
					size += len(o)
				}
				keep("jsonld", objs, size)
			}
		}
		if r.og {
			if m := metaMap(heads.metas, "property", "og:"); len(m) > 0 {
				keep("opengraph", m, mapSize(m))
			}
		}
		if r.metaTag {
			if m := metaMap(heads.metas, "name", ""); len(m) > 0 {
				keep("meta", m, mapSize(m))
			}
		}
	}
	return out
}

// safeValues is values, a panic of the XPath evaluator (antchfx/xpath panics on a function
// given a node set where it wants a string, or a number it cannot parse) made an error.
func (f field) safeValues(doc *goquery.Document) (values []string, err error) {
	defer func() {
		if p := recover(); p != nil {
			values, err = nil, fmt.Errorf("%v", p)
		}
	}()
	return f.values(doc), nil
}

// oversized says why a page is too large to run rules on ("": it is not).
func oversized(doc *goquery.Document) string {
	elements, widest := 0, 0
	var walk func(n *html.Node) bool
	walk = func(n *html.Node) bool {
		children := 0
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode {
				continue
			}
			elements++
			children++
			if elements > maxElements || !walk(c) {
				return false
			}
		}
		widest = max(widest, children)
		return widest <= maxSiblings
	}
	for _, n := range doc.Nodes {
		if !walk(n) {
			return fmt.Sprintf("page too large to extract from (over %d elements, or %d siblings)", maxElements, maxSiblings)
		}
	}
	return ""
}

// values are the field's matches, text or attribute, whitespace collapsed, each capped: the
// first only unless all.
func (f field) values(doc *goquery.Document) []string {
	limit := 1
	if f.all {
		limit = crawl.MaxExtractValues
	}
	var out []string
	visited := 0
	add := func(v string) bool {
		visited++
		if v = clip(collapse(v), f.cap); v != "" {
			out = append(out, v)
		}
		return len(out) < limit && visited < limit*visitFactor
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

// structured is what rules without selectors read of a page: its meta elements and its
// JSON-LD scripts, found in one walk of the tree (cascadia's selectors walk it once each).
type structured struct {
	metas, scripts []*html.Node
}

func structuredOf(doc *goquery.Document) *structured {
	st := &structured{}
	stack := append([]*html.Node(nil), doc.Nodes...)
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n.Type == html.ElementNode {
			switch n.Data {
			case "meta":
				st.metas = append(st.metas, n)
			case "script":
				if attr(n, "type") == "application/ld+json" {
					st.scripts = append(st.scripts, n)
				}
			}
		}
		// Children pushed last first, so the walk is in document order.
		for c := n.LastChild; c != nil; c = c.PrevSibling {
			stack = append(stack, c)
		}
	}
	return st
}

// attr is n's attribute key ("" when it has none).
func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			return a.Val
		}
	}
	return ""
}

// hasAttr says whether n has the attribute key.
func hasAttr(n *html.Node, key string) bool {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			return true
		}
	}
	return false
}

// jsonLD is the page's JSON-LD: each script's object (or each of its array), re-encoded as
// Postgres's jsonb takes it (clean); a script that is not JSON is skipped.
func jsonLD(scripts []*html.Node) []json.RawMessage {
	var out []json.RawMessage
	for _, n := range scripts {
		text := scriptText(n)
		if text == "" {
			continue
		}
		dec := json.NewDecoder(strings.NewReader(text))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) != nil {
			continue
		}
		items := []any{v}
		if list, ok := v.([]any); ok {
			items = list
		}
		for _, it := range items {
			if len(out) >= maxJSONLD {
				return out
			}
			if b, err := json.Marshal(clean(it, 0)); err == nil {
				out = append(out, b)
			}
		}
	}
	return out
}

// scriptText is a script element's text, "" past maxJSONBytes (not built whole first).
func scriptText(n *html.Node) string {
	var b strings.Builder
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.TextNode {
			if b.Len()+len(c.Data) > maxJSONBytes {
				return ""
			}
			b.WriteString(c.Data)
		}
	}
	return strings.TrimSpace(b.String())
}

// maxJSONDepth bounds the nesting of a JSON-LD object kept; deeper values become null.
const maxJSONDepth = 32

// clean makes a decoded JSON value one Postgres's jsonb stores: no NUL in a string or key
// (jsonb refuses \u0000), valid UTF-8, numbers it can hold (others kept as their text), and
// bounded nesting.
func clean(v any, depth int) any {
	if depth > maxJSONDepth {
		return nil
	}
	switch x := v.(type) {
	case string:
		return text(x)
	case json.Number:
		if f, err := strconv.ParseFloat(string(x), 64); err != nil || math.IsInf(f, 0) || math.Abs(f) > 1e300 {
			return string(x)
		}
		return x
	case []any:
		for i := range x {
			x[i] = clean(x[i], depth+1)
		}
		return x
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[text(k)] = clean(e, depth+1)
		}
		return m
	}
	return v
}

// text is a string a page gave, storable: no NUL, valid UTF-8.
func text(s string) string {
	return strings.ToValidUTF8(strings.ReplaceAll(s, "\x00", ""), "\uFFFD")
}

// metaMap reads meta elements by their key attribute (property or name) when it starts with
// prefix, the first of each key, capped. Named meta tags (prefix "") must carry content.
func metaMap(metas []*html.Node, key, prefix string) map[string]string {
	m := map[string]string{}
	for _, n := range metas {
		raw := attr(n, key)
		if !strings.HasPrefix(raw, prefix) || prefix == "" && (!hasAttr(n, key) || !hasAttr(n, "content")) {
			continue
		}
		k := clip(strings.TrimSpace(raw), 200)
		if k == "" {
			continue
		}
		if _, seen := m[k]; !seen {
			m[k] = clip(collapse(attr(n, "content")), crawl.DefaultExtractBytes)
		}
		if len(m) >= maxMetaTags {
			break
		}
	}
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

// clip cuts s to at most n bytes at a rune boundary, valid UTF-8 without NUL.
func clip(s string, n int) string {
	s = text(s)
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
