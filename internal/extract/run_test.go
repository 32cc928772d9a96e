package extract

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/trawlerdev/trawler/internal/crawl"
)

const product = `<!DOCTYPE html><html><head><title>Lamp</title>
<meta property="og:title" content="Desk lamp"><meta property="og:image" content="http://shop.test/lamp.jpg">
<meta name="description" content="  A   lamp. "><meta name="robots" content="index">
<script type="application/ld+json">{"@type": "Product", "name": "Desk lamp", "offers": {"price": "19.90"}}</script>
<script type="application/ld+json">[{"@type": "BreadcrumbList"}, {"@type": "Organization"}]</script>
<script type="application/ld+json">{not json</script>
</head><body>
<h1 class="name"> Desk
 lamp </h1>
<span class="price" data-currency="EUR">19.90</span>
<ul class="tags"><li>home</li><li>light</li><li>  </li><li>desk</li></ul>
<a class="img" href="/lamp-big.jpg">big</a>
<p id="long">` + "ééééé" + `</p>
</body></html>`

// Rules find their fields by CSS and XPath alike — text or attribute, the first or all, with
// whitespace collapsed and values capped at a rune boundary — and the page's JSON-LD objects,
// OpenGraph properties and meta tags; a rule whose pattern does not match the URL finds
// nothing, and a page no rule takes costs nothing.
func TestRulesExtractFieldsByCSSAndXPath(t *testing.T) {
	specs := []crawl.ExtractRule{
		{Name: "product", Match: `/p/`, JSONLD: true, OpenGraph: true, Meta: true, Fields: []crawl.ExtractField{
			{Name: "name", CSS: "h1.name"},
			{Name: "name_x", XPath: `//h1[@class="name"]`},
			{Name: "price", CSS: ".price"},
			{Name: "currency", XPath: `//span[@class="price"]/@data-currency`},
			{Name: "currency_css", CSS: ".price", Attr: "data-currency"},
			{Name: "tags", CSS: "ul.tags li", All: true},
			{Name: "tags_x", XPath: `//ul[@class="tags"]/li`, All: true},
			{Name: "image", CSS: "a.img", Attr: "href"},
			{Name: "count", XPath: `count(//li)`},
			{Name: "title_x", XPath: `string(//title)`},
			{Name: "long", CSS: "#long", MaxBytes: 5},
			{Name: "missing", CSS: ".nope"},
		}},
		{Name: "blog", Match: `/blog/`, Fields: []crawl.ExtractField{{Name: "title", CSS: "title"}}},
	}
	if errs := validateRules(specs); len(errs) > 0 {
		t.Fatal(errs)
	}
	rs, err := Compile(specs)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(product))
	if err != nil {
		t.Fatal(err)
	}
	if rs.Matches("http://shop.test/about") || rs.Run("http://shop.test/about", doc) != nil {
		t.Error("a page no rule takes was extracted")
	}
	got := rs.Run("http://shop.test/p/lamp", doc)
	p := got["product"]
	want := map[string]any{"name": "Desk lamp", "name_x": "Desk lamp", "price": "19.90", "currency": "EUR", "currency_css": "EUR",
		"tags": []string{"home", "light", "desk"}, "tags_x": []string{"home", "light", "desk"}, "image": "/lamp-big.jpg",
		"count": "4", "title_x": "Lamp", "long": "éé"}
	for k, v := range want {
		if a, b := mustJSON(p[k]), mustJSON(v); a != b {
			t.Errorf("%s: %s, want %s", k, a, b)
		}
	}
	if _, ok := p["missing"]; ok {
		t.Error("a field without a match is present")
	}
	if _, ok := got["blog"]; ok {
		t.Error("a rule whose pattern does not match ran")
	}
	if ld := mustJSON(p["jsonld"]); !strings.Contains(ld, `"Product"`) || !strings.Contains(ld, `"BreadcrumbList"`) ||
		!strings.Contains(ld, `"Organization"`) || strings.Contains(ld, "not json") {
		t.Errorf("jsonld: %s", ld)
	}
	if og := p["opengraph"].(map[string]string); og["og:title"] != "Desk lamp" || og["og:image"] != "http://shop.test/lamp.jpg" {
		t.Errorf("opengraph: %v", og)
	}
	if m := p["meta"].(map[string]string); m["description"] != "A lamp." || m["robots"] != "index" {
		t.Errorf("meta: %v", m)
	}
}

// A spec's bad rules are refused at its start, each error naming the rule and the field.
func TestBadRulesAreRefusedNamed(t *testing.T) {
	errs := validateRules([]crawl.ExtractRule{
		{Name: "a", Match: "(", Fields: []crawl.ExtractField{{Name: "x", CSS: "div["}, {Name: "y", XPath: "//["}, {Name: "z"},
			{Name: "w", CSS: "p", XPath: "//p"}, {Name: "v", CSS: "p", MaxBytes: -1}}},
		{Name: "a"},
		{Name: "9bad", Fields: []crawl.ExtractField{{Name: "jsonld", CSS: "p"}, {Name: "_truncated", CSS: "p"}}},
		{Name: "r_a", Fields: []crawl.ExtractField{{Name: "b", CSS: "p"}, {Name: "list", CSS: "li", All: true, MaxBytes: 100000}}},
		{Name: "r", Fields: []crawl.ExtractField{{Name: "a_b", CSS: "p"}}},
	})
	text := ""
	for _, e := range errs {
		text += e.Error() + "\n"
	}
	for _, want := range []string{"extract[0] (a): match", "fields[0] (x): css", "fields[1] (y): xpath", "fields[2] (z): give one of css and xpath",
		"fields[3] (w): give one of", "fields[4] (v): maxBytes", "extract[1] (a): name: another rule", "extract[1] (a): no fields",
		"extract[2] (9bad): name", "(jsonld): name: jsonld is the rule's own", "fields[1] (_truncated): name",
		"(list): all with maxBytes", "extract[4] (r): a_b: its column r_a_b is also r_a.b's"} {
		if !strings.Contains(text, want) {
			t.Errorf("no error says %q; they say:\n%s", want, text)
		}
	}
}

func validateRules(rs []crawl.ExtractRule) []error {
	err := crawl.CheckExtract(rs)
	if err == nil {
		return nil
	}
	var out []error
	for _, line := range strings.Split(err.Error(), "\n") {
		out = append(out, errString(line))
	}
	return out
}

type errString string

func (e errString) Error() string { return string(e) }

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// A hostile page cannot break a page's save or the rules' run: JSON-LD Postgres's jsonb would
// refuse (a NUL, a number out of its range, deep nesting) is cleaned; an XPath function the
// page hands the wrong kind of value to fails that field alone, recorded; a page of too many
// siblings is skipped, said so.
func TestHostilePagesCannotBreakExtraction(t *testing.T) {
	deep := strings.Repeat(`{"a":`, 60) + `1` + strings.Repeat(`}`, 60)
	page := `<html><head><script type="application/ld+json">{"name": "x\u0000y", "n": 1e1000000, "deep": ` + deep + `}</script></head>
<body><span class="price" title="t">19,90 €</span></body></html>`
	rs, err := Compile([]crawl.ExtractRule{{Name: "r", JSONLD: true, Fields: []crawl.ExtractField{
		{Name: "sum", XPath: `sum(string(//span[@class='price']))`},
		{Name: "bad", XPath: `contains(., @title)`},
		{Name: "price", CSS: ".price"}}}})
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := goquery.NewDocumentFromReader(strings.NewReader(page))
	got := rs.Run("http://a.test/", doc)["r"]
	ld := mustJSON(got["jsonld"])
	if strings.Contains(ld, `\u0000`) || !strings.Contains(ld, `"xy"`) || !strings.Contains(ld, `"1e1000000"`) {
		t.Errorf("jsonld not cleaned: %s", ld)
	}
	if got["price"] != "19,90 €" {
		t.Errorf("the good field: %v", got["price"])
	}
	if failed := mustJSON(got["_failed"]); !strings.Contains(failed, "bad:") {
		t.Errorf("the failing XPath is not recorded: %s (result %v)", failed, got)
	}
	wide := "<html><body><ul>" + strings.Repeat("<li>x</li>", maxSiblings+1) + "</ul></body></html>"
	doc, _ = goquery.NewDocumentFromReader(strings.NewReader(wide))
	if got := rs.Run("http://a.test/", doc)["r"]; got["_skipped"] == nil || got["price"] != nil {
		t.Errorf("a page of %d siblings was extracted: %v", maxSiblings+1, got)
	}
}
