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
	MaxExtractFields    = 100 // per rule
	MaxExtractValues    = 100 // values of one field with All
)

// ValueCap is the field's cap on one value.
func (f ExtractField) ValueCap() int {
	if f.MaxBytes <= 0 {
		return DefaultExtractBytes
	}
	return f.MaxBytes
}

var extractName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)

// CheckExtract checks extraction rules as a spec's are checked (for rules run again over a
// stored crawl), every error in one.
func CheckExtract(rules []ExtractRule) error { return errors.Join(validateExtract(rules)...) }

// validateExtract checks the rules as the process stage will compile them, naming the rule
// and field of each error: a bad regexp, CSS selector or XPath expression is refused at the
// start, not found empty on every page.
func validateExtract(rules []ExtractRule) []error {
	var errs []error
	if len(rules) > MaxExtractRules {
		errs = append(errs, fmt.Errorf("extract: %d rules; at most %d", len(rules), MaxExtractRules))
	}
	names := map[string]bool{}
	for i, r := range rules {
		at := fmt.Sprintf("extract[%d] (%s)", i, r.Name)
		switch {
		case !extractName.MatchString(r.Name):
			errs = append(errs, fmt.Errorf("%s: name: want letters, digits and _, 1–64, not starting with a digit", at))
		case names[r.Name]:
			errs = append(errs, fmt.Errorf("%s: name: another rule has it", at))
		}
		names[r.Name] = true
		if _, err := regexp.Compile(r.Match); err != nil {
			errs = append(errs, fmt.Errorf("%s: match: %v", at, err))
		}
		if len(r.Fields) == 0 && !r.JSONLD && !r.OpenGraph && !r.Meta {
			errs = append(errs, fmt.Errorf("%s: no fields, and none of jsonld, opengraph, meta", at))
		}
		if len(r.Fields) > MaxExtractFields {
			errs = append(errs, fmt.Errorf("%s: %d fields; at most %d", at, len(r.Fields), MaxExtractFields))
		}
		fields := map[string]bool{}
		for j, f := range r.Fields {
			fat := fmt.Sprintf("%s.fields[%d] (%s)", at, j, f.Name)
			switch {
			case !extractName.MatchString(f.Name):
				errs = append(errs, fmt.Errorf("%s: name: want letters, digits and _, 1–64, not starting with a digit", fat))
			case fields[f.Name]:
				errs = append(errs, fmt.Errorf("%s: name: another field of the rule has it", fat))
			case f.Name == "jsonld" || f.Name == "opengraph" || f.Name == "meta":
				errs = append(errs, fmt.Errorf("%s: name: %s is the rule's own", fat, f.Name))
			}
			fields[f.Name] = true
			switch {
			case (f.CSS == "") == (f.XPath == ""):
				errs = append(errs, fmt.Errorf("%s: give one of css and xpath", fat))
			case f.CSS != "":
				if _, err := cascadia.Compile(f.CSS); err != nil {
					errs = append(errs, fmt.Errorf("%s: css %q: %v", fat, f.CSS, err))
				}
			default:
				if _, err := xpath.Compile(f.XPath); err != nil {
					errs = append(errs, fmt.Errorf("%s: xpath %q: %v", fat, f.XPath, err))
				}
			}
			if f.MaxBytes < 0 || f.MaxBytes > MaxExtractBytes {
				errs = append(errs, fmt.Errorf("%s: maxBytes: %d is outside 0…%d", fat, f.MaxBytes, MaxExtractBytes))
			}
		}
	}
	return errs
}
