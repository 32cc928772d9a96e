package export

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/trawlerdev/trawler/internal/crawl"
)

// A crawl's extraction rules make a column of each field: nested as stored in JSON Lines (or
// picked one by one), a column each in CSV (a list as a JSON array) and in Parquet (a list
// as a list), and a page without a value gets an empty one.
func TestExtractedFieldsAreColumns(t *testing.T) {
	cols := extractColumns([]crawl.ExtractRule{{Name: "product", OpenGraph: true, Fields: []crawl.ExtractField{
		{Name: "price", CSS: ".p"}, {Name: "tags", CSS: "li", All: true}}}})
	names := []string{}
	for _, c := range cols {
		names = append(names, c.name)
	}
	if !slices.Equal(names, []string{"extract.product.price", "extract.product.tags", "extract.product.opengraph"}) {
		t.Fatalf("columns %v", names)
	}
	stored := `{"product": {"price": "19.90", "tags": ["home", "a,b"], "opengraph": {"og:title": "Lamp"}}}`
	recs := []Record{{URL: "http://shop.test/p/1", Extract: stored}, {URL: "http://shop.test/p/2"}}
	encode := func(format string, fields []string, cols []column) []byte {
		var buf bytes.Buffer
		enc, err := newEncoder(format, &buf, fields, cols, false)
		if err != nil {
			t.Fatal(err)
		}
		for i := range recs {
			if err := enc.encode(&recs[i], parseExtracted(recs[i].Extract)); err != nil {
				t.Fatal(err)
			}
		}
		if err := enc.close(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}

	lines := strings.Split(strings.TrimSpace(string(encode("jsonl", []string{"url", "extract"}, cols[:2]))), "\n")
	var first map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
		t.Fatal(err)
	}
	if first["extract.product.price"] != "19.90" || first["extract"].(map[string]any)["product"].(map[string]any)["price"] != "19.90" {
		t.Errorf("jsonl: %s", lines[0])
	}
	if !strings.Contains(lines[1], `"extract":null`) || !strings.Contains(lines[1], `"extract.product.tags":[]`) {
		t.Errorf("jsonl of a page without values: %s", lines[1])
	}

	rows, err := csv.NewReader(bytes.NewReader(encode("csv", []string{"url"}, cols))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rows[0], append([]string{"url"}, names...)) || rows[1][1] != "19.90" || rows[1][2] != `["home","a,b"]` ||
		rows[1][3] != `{"og:title": "Lamp"}` || rows[2][1] != "" {
		t.Errorf("csv: %q", rows)
	}

	data := encode("parquet", []string{"url"}, cols)
	type row struct {
		URL   string   `parquet:"url"`
		Price string   `parquet:"extract_product_price"`
		Tags  []string `parquet:"extract_product_tags,list"`
		OG    string   `parquet:"extract_product_opengraph"`
	}
	got, err := parquet.Read[row](bytes.NewReader(data), int64(len(data)))
	if err != nil || len(got) != 2 || got[0].Price != "19.90" || !slices.Equal(got[0].Tags, []string{"home", "a,b"}) ||
		!strings.Contains(got[0].OG, "Lamp") || got[1].Price != "" {
		t.Errorf("parquet: %+v, %v", got, err)
	}

	o := Options{Crawl: "c", Format: "csv", Fields: []string{"url", "extract.product.price", "extract_product_tags"}}
	if err := o.Check(); err != nil {
		t.Fatal(err)
	}
	if f, c, err := o.pick(cols); err != nil || !slices.Equal(f, []string{"url"}) || len(c) != 2 {
		t.Errorf("pick: %v %v %v", f, c, err)
	}
	o.Fields = []string{"extract.product.nope"}
	if _, _, err := o.pick(cols); err == nil || !strings.Contains(err.Error(), "extract.product.price") {
		t.Errorf("an unknown extracted field: %v", err)
	}
	if f, c, _ := (Options{Format: "jsonl"}).pick(cols); !slices.Contains(f, "extract") || c != nil {
		t.Errorf("jsonl defaults: %v %v", f, c)
	}
	if f, c, _ := (Options{Format: "parquet"}).pick(cols); slices.Contains(f, "extract") || len(c) != 3 {
		t.Errorf("parquet defaults: %v %v", f, c)
	}
	if f, _, _ := (Options{Format: "jsonl"}).pick(nil); slices.Contains(f, "extract") {
		t.Errorf("a crawl without rules exports an extract field: %v", f)
	}
}
