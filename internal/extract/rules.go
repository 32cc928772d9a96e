// Package extract owns running a crawl's extraction rules (crawl.ExtractRule): compiled once
// per crawl, run by the process stage on the page it has already parsed (no second parse),
// each rule on the pages its URL pattern matches — CSS selectors (cascadia, goquery's) and
// XPath expressions (antchfx/htmlquery) for named fields, and the page's JSON-LD objects,
// OpenGraph properties and meta tags without selectors — every value capped where it is kept.
package extract

import (
	"fmt"
	"regexp"

	"github.com/andybalholm/cascadia"
	"github.com/antchfx/xpath"

	"github.com/trawlerdev/trawler/internal/crawl"
)

// Rules are a crawl's compiled extraction rules.
type Rules struct {
	rules []rule
}

type rule struct {
	name                string
	match               *regexp.Regexp
	fields              []field
	jsonld, og, metaTag bool
}

type field struct {
	name string
	css  cascadia.Selector // or
	xp   *xpath.Expr
	attr string
	all  bool
	cap  int
}

// Compile compiles a spec's rules (nil, nil for none). The spec was validated at its start
// (crawl.Spec.Validate), so an error here is a spec recorded before a rule's check existed.
func Compile(specs []crawl.ExtractRule) (*Rules, error) {
	if len(specs) == 0 {
		return nil, nil
	}
	out := &Rules{}
	for _, s := range specs {
		m, err := regexp.Compile(s.Match)
		if err != nil {
			return nil, fmt.Errorf("extract %s: match: %w", s.Name, err)
		}
		r := rule{name: s.Name, match: m, jsonld: s.JSONLD, og: s.OpenGraph, metaTag: s.Meta}
		for _, f := range s.Fields {
			cf := field{name: f.Name, attr: f.Attr, all: f.All, cap: f.ValueCap()}
			if f.CSS != "" {
				if cf.css, err = cascadia.Compile(f.CSS); err != nil {
					return nil, fmt.Errorf("extract %s.%s: css: %w", s.Name, f.Name, err)
				}
			} else if cf.xp, err = xpath.Compile(f.XPath); err != nil {
				return nil, fmt.Errorf("extract %s.%s: xpath: %w", s.Name, f.Name, err)
			}
			r.fields = append(r.fields, cf)
		}
		out.rules = append(out.rules, r)
	}
	return out, nil
}

// Matches says whether any rule takes the page at pageURL: a page no rule takes costs nothing.
func (rs *Rules) Matches(pageURL string) bool {
	if rs == nil {
		return false
	}
	for _, r := range rs.rules {
		if r.match.MatchString(pageURL) {
			return true
		}
	}
	return false
}
