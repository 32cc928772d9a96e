package extract

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/trawlerdev/trawler/internal/crawl"
)

// benchRules are make bench-deliveries' rules: a heading and a section ID (CSS, XPath), every
// section heading and internal link, meta, OpenGraph and JSON-LD.
var benchRules = []crawl.ExtractRule{{Name: "doc", Fields: []crawl.ExtractField{
	{Name: "title", CSS: "h1"},
	{Name: "sections", CSS: "h2", All: true},
	{Name: "links", CSS: "a.reference.internal", Attr: "href", All: true, MaxBytes: 200},
	{Name: "section", XPath: "//div[@class='section' or @class='body']/@id"},
}, JSONLD: true, OpenGraph: true, Meta: true}}

// BenchmarkRun is what the rules cost a page, beyond the parse processing makes anyway: pages
// of Python's HTML manual (scripts/tools.sh unpacks it; a 100 KB and a 290 KB page), and the
// product page of the unit tests.
func BenchmarkRun(b *testing.B) {
	rules, err := Compile(benchRules)
	if err != nil {
		b.Fatal(err)
	}
	html := filepath.Join("..", "..", ".tools", "pydoc", "usr", "share", "doc", "python3.11", "html")
	for _, page := range []string{"tutorial/classes.html", "library/functions.html", ""} {
		data := []byte(product)
		name := "product"
		if page != "" {
			if data, err = os.ReadFile(filepath.Join(html, page)); err != nil {
				b.Fatalf("the Python manual is not unpacked (scripts/tools.sh): %v", err)
			}
			name = page
		}
		doc, err := goquery.NewDocumentFromReader(bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				res := rules.Run("http://docs.test/"+page, doc)
				if out, err := json.Marshal(res); err != nil || len(out) < 20 { // as processing stores it
					b.Fatalf("extracted %s (%v)", out, err)
				}
			}
		})
	}
}
