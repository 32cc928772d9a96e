package crawl

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// A spec names only fields Trawler knows: a typo (maxpages) or another crawler's field would
// otherwise be dropped by the JSON decoder, and the crawl run, just not the one asked for.
// Decoding a Spec notes the fields it does not know (at every level: recrawl, warc …), and
// CheckFields refuses them, each with the nearest known name. The check is not part of
// Validate, which the crawl workflow runs on every replay: a crawl started before the check
// existed must replay as it ran. New crawls are checked by the CLI and the API before they
// start, and by the crawl's StartCrawl step (its input carries the unknown fields).

// UnknownField is a field of a spec's JSON that no field of Spec names.
type UnknownField struct {
	Path    string `json:"path"`              // dotted, as written: "recrawl.intervall"
	Nearest string `json:"nearest,omitempty"` // the known name it is nearest to, if one is near
}

func (u UnknownField) String() string {
	if u.Nearest != "" {
		return fmt.Sprintf("%s: unknown field; did you mean %s?", u.Path, u.Nearest)
	}
	return u.Path + ": unknown field"
}

// UnmarshalJSON decodes a spec as encoding/json does, noting the fields it does not know.
func (s *Spec) UnmarshalJSON(data []byte) error { return s.DecodeJSON(data) }

// DecodeJSON is UnmarshalJSON for a spec inside a larger object whose own keys (also) are not
// the spec's to refuse.
func (s *Spec) DecodeJSON(data []byte, also ...string) error {
	type plain Spec // without this method
	if err := json.Unmarshal(data, (*plain)(s)); err != nil {
		return err
	}
	s.unknown = unknownFields(data, reflect.TypeOf(plain{}), "", also)
	return nil
}

// UnknownFields are the fields the spec's JSON named that Spec does not know (none for a spec
// built in Go).
func (s Spec) UnknownFields() []UnknownField { return s.unknown }

// CheckFields refuses fields a spec does not know, naming each.
func CheckFields(unknown []UnknownField) error {
	if len(unknown) == 0 {
		return nil
	}
	msgs := make([]string, len(unknown))
	for i, u := range unknown {
		msgs[i] = u.String()
	}
	return errors.New(strings.Join(msgs, "; "))
}

// unknownFields lists the keys of the JSON object data that t's fields do not name, and those
// of the objects nested under known struct fields, as dotted paths.
func unknownFields(data []byte, t reflect.Type, prefix string, also []string) []UnknownField {
	var obj map[string]json.RawMessage
	if json.Unmarshal(data, &obj) != nil {
		return nil // not an object: the decoder said what was wrong, or there is nothing to check
	}
	known := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		known[name] = f.Type
	}
	for _, a := range also {
		known[a] = nil
	}
	var out []UnknownField
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		ft, ok := known[k]
		if !ok {
			u := UnknownField{Path: prefix + k}
			if n := nearest(k, known); n != "" {
				u.Nearest = prefix + n
			}
			out = append(out, u)
			continue
		}
		for ft != nil && ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch {
		case ft != nil && ft.Kind() == reflect.Struct:
			out = append(out, unknownFields(obj[k], ft, prefix+k+".", nil)...)
		case ft != nil && ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
			// A list of objects (extract's rules, a rule's fields): each element by its index.
			var items []json.RawMessage
			if json.Unmarshal(obj[k], &items) == nil {
				for i, it := range items {
					out = append(out, unknownFields(it, ft.Elem(), fmt.Sprintf("%s%s[%d].", prefix, k, i), nil)...)
				}
			}
		}
	}
	return out
}

// nearest is the known name closest to k (case aside, by edit distance), if it is within a
// third of k's length (at least 2 edits); "" otherwise.
func nearest(k string, known map[string]reflect.Type) string {
	best, bestD := "", max(len(k)/3, 2)+1
	names := make([]string, 0, len(known))
	for n := range known {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if d := editDistance(strings.ToLower(k), strings.ToLower(n)); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b (bytes).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
