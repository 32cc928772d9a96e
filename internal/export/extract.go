package export

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/trawlerdev/trawler/internal/crawl"
)

// column is a field the crawl's extraction rules name, exported as a column of its own:
// extract.<rule>.<field> in JSON Lines and CSV, extract_<rule>_<field> in Parquet (as the
// other fields take snake case there). A field with all is a list; a rule's jsonld,
// opengraph and meta are JSON text.
type column struct {
	name, parquet string
	rule, field   string
	list, json    bool
}

// extractColumns are the columns a crawl's rules make, in the rules' order.
func extractColumns(rules []crawl.ExtractRule) []column {
	var out []column
	add := func(rule, field string, list, isJSON bool) {
		out = append(out, column{name: "extract." + rule + "." + field, parquet: "extract_" + rule + "_" + field,
			rule: rule, field: field, list: list, json: isJSON})
	}
	for _, r := range rules {
		list := map[string]bool{}
		for _, f := range r.Fields {
			list[f.Name] = f.All
		}
		for _, name := range r.Outputs() {
			all, isField := list[name]
			add(r.Name, name, all, !isField)
		}
	}
	return out
}

// extracted is a page's extraction as stored: per rule, per field, the value's JSON.
type extracted map[string]map[string]json.RawMessage

func parseExtracted(raw string) extracted {
	if raw == "" {
		return nil
	}
	var x extracted
	_ = json.Unmarshal([]byte(raw), &x) // written by processing as this shape
	return x
}

// value is the column's value for a page: a string, a list of strings, or JSON text; the
// zero value when the page has none.
func (c column) value(x extracted) any {
	raw := x[c.rule][c.field]
	switch {
	case c.json:
		return string(raw)
	case c.list:
		var l []string
		_ = json.Unmarshal(raw, &l)
		if l == nil {
			l = []string{}
		}
		return l
	default:
		var s string
		_ = json.Unmarshal(raw, &s)
		return s
	}
}

// text is the column's value in a CSV cell: a list as a JSON array, so a value holding the
// separator stays one value.
func (c column) text(x extracted) string {
	switch v := c.value(x).(type) {
	case []string:
		b, _ := json.Marshal(v)
		return string(b)
	default:
		return v.(string)
	}
}

// structField is the column as a Parquet row's field.
func (c column) structField(i int) reflect.StructField {
	typ, tag := reflect.TypeOf(""), c.parquet
	if c.list {
		typ, tag = reflect.TypeOf([]string{}), c.parquet+",list"
	}
	return reflect.StructField{Name: fmt.Sprintf("X%d", i), Type: typ, Tag: reflect.StructTag(`parquet:"` + tag + `"`)}
}
