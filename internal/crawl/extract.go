package crawl

import (
	"errors"
	"fmt"
	"regexp"

	"github.com/andybalholm/cascadia"
	"github.com/antchfx/xpath"
)

// ExtractRule names fields to extract from the pages whose URL matches Match (spec.extract):
// each field a CSS selector or an XPath expression, and, without selectors, the page's JSON-LD
// objects, OpenGraph properties and meta tags. Rules run in the process stage on the page it
// parsed; what they find is stored with the document and exported.
type ExtractRule struct {
	Name      string         `json:"name"`
	Match     string         `json:"match,omitempty"` // a Go regexp on the page's URL ("": every HTML page)
	Fields    []ExtractField `json:"fields,omitempty"`
	JSONLD    bool           `json:"jsonld,omitempty"`    // the page's <script type="application/ld+json"> objects
	OpenGraph bool           `json:"opengraph,omitempty"` // <meta property="og:…">
	Meta      bool           `json:"meta,omitempty"`      // <meta name="…" content="…">
}

// ExtractField is one named value of a rule: the text (or an attribute) of the first match
// of CSS or XPath, or of every match with All.
type ExtractField struct {
	Name     string `json:"name"`
	CSS      string `json:"css,omitempty"`
	XPath    string `json:"xpath,omitempty"`
	Attr     string `json:"attr,omitempty"`     // "": the element's text
	All      bool   `json:"all,omitempty"`      // every match, as a list
	MaxBytes int    `json:"maxBytes,omitempty"` // per value (default DefaultExtractBytes)
}

// Bounds of extraction: what one page's rules may keep.
const (
	DefaultExtractBytes = 1000    // a value's cap when the field names none
	MaxExtractBytes     = 100_000 // the most a field may ask for one value
	MaxExtractRules     = 50
	MaxExtractFields    = 100       // per rule
	MaxExtractValues    = 100       // values of one field with All
	MaxExtractPageBytes = 256 << 10 // what one page's rules keep in all
	maxExtractExpr      = 2 << 10   // a match, css, xpath or attr
)

// ValueCap is the field's cap on one value.
func (f ExtractField) ValueCap() int {
	if f.MaxBytes <= 0 {
		return DefaultExtractBytes
	}
	return f.MaxBytes
}

// extractName is a rule's or field's name: a leading _ is the result's own (_truncated).
var extractName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,63}$`)

// CheckExtract checks extraction rules whole: their shape (as Validate does) and that every
// pattern, CSS selector and XPath expression compiles. It runs before a crawl starts (the CLI,
// the crawl's start activity) and before rules run again; not in Validate, which a workflow
// replays: a library that came to read a selector otherwise must not fail a running crawl.
func CheckExtract(rules []ExtractRule) error {
	errs := validateExtract(rules)
	for i, r := range rules {
		at := fmt.Sprintf("extract[%d] (%s)", i, r.Name)
		if _, err := regexp.Compile(r.Match); err != nil {
			errs = append(errs, fmt.Errorf("%s: match: %v", at, err))
		}
		for j, f := range r.Fields {
			fat := fmt.Sprintf("%s.fields[%d] (%s)", at, j, f.Name)
			switch {
			case f.CSS != "" && f.XPath == "":
				if _, err := cascadia.Compile(f.CSS); err != nil {
					errs = append(errs, fmt.Errorf("%s: css %q: %v", fat, f.CSS, err))
				}
			case f.XPath != "" && f.CSS == "":
				if _, err := xpath.Compile(f.XPath); err != nil {
					errs = append(errs, fmt.Errorf("%s: xpath %q: %v", fat, f.XPath, err))
				}
			}
		}
	}
	return errors.Join(errs...)
}

// validateExtract checks the rules' shape, naming the rule and field of each error.
func validateExtract(rules []ExtractRule) []error {
	var errs []error
	if len(rules) > MaxExtractRules {
		errs = append(errs, fmt.Errorf("extract: %d rules; at most %d", len(rules), MaxExtractRules))
	}
	names := map[string]bool{}
	columns := map[string]string{} // rule_field, as Parquet names the columns: unique
	for i, r := range rules {
		at := fmt.Sprintf("extract[%d] (%s)", i, r.Name)
		switch {
		case !extractName.MatchString(r.Name):
			errs = append(errs, fmt.Errorf("%s: name: want a letter, then letters, digits and _, at most 64", at))
		case names[r.Name]:
			errs = append(errs, fmt.Errorf("%s: name: another rule has it", at))
		}
		names[r.Name] = true
		if len(r.Match) > maxExtractExpr {
			errs = append(errs, fmt.Errorf("%s: match: longer than %d bytes", at, maxExtractExpr))
		}
		if len(r.Fields) == 0 && !r.JSONLD && !r.OpenGraph && !r.Meta {
			errs = append(errs, fmt.Errorf("%s: no fields, and none of jsonld, opengraph, meta", at))
		}
		if len(r.Fields) > MaxExtractFields {
			errs = append(errs, fmt.Errorf("%s: %d fields; at most %d", at, len(r.Fields), MaxExtractFields))
		}
		fields := map[string]bool{}
		for _, out := range r.Outputs() {
			col := r.Name + "_" + out
			if other, ok := columns[col]; ok && other != r.Name+"."+out {
				errs = append(errs, fmt.Errorf("%s: %s: its column %s is also %s's", at, out, col, other))
			}
			columns[col] = r.Name + "." + out
		}
		for j, f := range r.Fields {
			fat := fmt.Sprintf("%s.fields[%d] (%s)", at, j, f.Name)
			switch {
			case !extractName.MatchString(f.Name):
				errs = append(errs, fmt.Errorf("%s: name: want a letter, then letters, digits and _, at most 64", fat))
			case fields[f.Name]:
				errs = append(errs, fmt.Errorf("%s: name: another field of the rule has it", fat))
			case f.Name == "jsonld" || f.Name == "opengraph" || f.Name == "meta":
				errs = append(errs, fmt.Errorf("%s: name: %s is the rule's own", fat, f.Name))
			}
			fields[f.Name] = true
			switch {
			case (f.CSS == "") == (f.XPath == ""):
				errs = append(errs, fmt.Errorf("%s: give one of css and xpath", fat))
			case len(f.CSS) > maxExtractExpr || len(f.XPath) > maxExtractExpr || len(f.Attr) > maxExtractExpr:
				errs = append(errs, fmt.Errorf("%s: css, xpath or attr longer than %d bytes", fat, maxExtractExpr))
			}
			switch {
			case f.MaxBytes < 0 || f.MaxBytes > MaxExtractBytes:
				errs = append(errs, fmt.Errorf("%s: maxBytes: %d is outside 0…%d", fat, f.MaxBytes, MaxExtractBytes))
			case f.All && f.ValueCap()*MaxExtractValues > MaxExtractPageBytes:
				errs = append(errs, fmt.Errorf("%s: all with maxBytes %d could keep %d bytes, more than a page keeps (%d): lower maxBytes",
					fat, f.ValueCap(), f.ValueCap()*MaxExtractValues, MaxExtractPageBytes))
			}
		}
	}
	return errs
}

// Outputs are the names a rule's results carry, in order: its fields', then jsonld,
// opengraph and meta when it takes them. Exports and the report name columns by them.
func (r ExtractRule) Outputs() []string {
	var out []string
	for _, f := range r.Fields {
		out = append(out, f.Name)
	}
	for _, s := range []struct {
		on   bool
		name string
	}{{r.JSONLD, "jsonld"}, {r.OpenGraph, "opengraph"}, {r.Meta, "meta"}} {
		if s.on {
			out = append(out, s.name)
		}
	}
	return out
}
