package e2e

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/trawlerdev/trawler/internal/testweb"
)

// shopRules extract shop.test's products twice — by CSS selectors and by XPath, each a
// selector group covering the shop's three layouts — and its structured data.
const shopRules = `[
 {"name": "css", "match": "/p/\\d+$", "fields": [
   {"name": "name", "css": "h1.name, [itemprop=name], table.spec caption"},
   {"name": "price", "css": "span.price, span[itemprop=price], table.spec tr:first-of-type td"},
   {"name": "sku", "css": "p.sku b, [itemprop=sku], table.spec tr:nth-of-type(3) td"},
   {"name": "tags", "css": "ul.tags li.tag", "all": true}]},
 {"name": "xpath", "match": "/p/\\d+$", "fields": [
   {"name": "name", "xpath": "//h1[@class='name'] | //*[@itemprop='name'] | //table[@class='spec']/caption"},
   {"name": "price", "xpath": "//span[@class='price'] | //span[@itemprop='price'] | //th[.='Price']/following-sibling::td"},
   {"name": "currency", "xpath": "//span[@class='price']/@data-currency | //meta[@itemprop='priceCurrency']/@content | //th[.='Currency']/following-sibling::td"},
   {"name": "sku", "xpath": "//p[@class='sku']/b | //*[@itemprop='sku'] | //th[.='SKU']/following-sibling::td"},
   {"name": "tags", "xpath": "//ul[@class='tags']/li", "all": true}]},
 {"name": "data", "match": "/p/", "jsonld": true, "opengraph": true, "meta": true}
]`

// A crawl started with extraction rules (trawler crawl --extract) extracts every truth value
// of shop.test's products, by CSS and XPath alike, and their JSON-LD and OpenGraph data; the
// values are stored with each document and exported in JSON Lines (nested), CSV and Parquet
// (a column each); the front page, which no rule matches, has none; a bad rule is refused at
// the start, naming the field.
func TestExtractionRulesGiveEveryTruthValue(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.Pages, wc.Specials, wc.Shop = 1, 2, false, true
	s := newStack(t, wc)
	r := &resultsStack{stack: s, bin: buildBinary(t, "trawler", "./starter"), dir: t.TempDir()}
	rules := filepath.Join(r.dir, "rules.json")
	if err := os.WriteFile(rules, []byte(shopRules), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(r.dir, "bad.json")
	_ = os.WriteFile(bad, []byte(`[{"name": "x", "fields": [{"name": "price", "xpath": "//span["}]}]`), 0o644)
	cmd := exec.Command(r.bin, "crawl", "--name", "shop-bad", "--extract", bad, "http://shop.test/")
	cmd.Env = r.env()
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "fields[0] (price): xpath") {
		t.Errorf("a bad XPath was not refused by name (%v): %s", err, out)
	}
	cmd = exec.Command(r.bin, "crawl", "--name", "shop", "--scope", "host", "--delay", "20ms", "--extract", rules, "--wait", "http://shop.test/")
	cmd.Env = r.env()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("trawler crawl --extract: %v\n%s", err, out)
	}
	truth := map[string]testweb.Product{}
	for _, p := range testweb.ShopProducts() {
		truth[p.URL] = p
	}
	check := func(format, url, rule, field, got string) {
		t.Helper()
		p, ok := truth[url]
		if !ok {
			return
		}
		want := map[string]string{"name": p.Name, "price": p.Price, "currency": p.Currency, "sku": p.SKU,
			"tags": mustJSONString(p.Tags)}[field]
		if got != want {
			t.Errorf("%s: %s %s.%s = %q, want %q", format, url, rule, field, got, want)
		}
	}

	// JSON Lines: nested under extract.
	seen := 0
	firstExport := r.trawler(t, "export", "--crawl", "shop", "--fields", "url,extract")
	sc := bufio.NewScanner(bytes.NewReader(r.trawler(t, "export", "--crawl", "shop")))
	sc.Buffer(nil, 8<<20)
	for sc.Scan() {
		var rec struct {
			URL     string                                `json:"url"`
			Extract map[string]map[string]json.RawMessage `json:"extract"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		p, ok := truth[rec.URL]
		if !ok {
			if rec.Extract != nil {
				t.Errorf("%s, which no rule matches, has extracted values %v", rec.URL, rec.Extract)
			}
			continue
		}
		seen++
		for rule, fields := range map[string][]string{"css": {"name", "price", "sku", "tags"}, "xpath": {"name", "price", "currency", "sku", "tags"}} {
			for _, f := range fields {
				check("jsonl", rec.URL, rule, f, valueText(rec.Extract[rule][f]))
			}
		}
		data := rec.Extract["data"]
		var og map[string]string
		_ = json.Unmarshal(data["opengraph"], &og)
		if og["og:title"] != p.Name || !strings.Contains(string(data["jsonld"]), `"sku":"`+p.SKU+`"`) &&
			!strings.Contains(string(data["jsonld"]), `"sku": "`+p.SKU+`"`) {
			t.Errorf("%s: structured data %s", rec.URL, data)
		}
	}
	if seen != len(truth) {
		t.Errorf("%d of %d products exported", seen, len(truth))
	}

	// CSV: a column each.
	rows, err := csv.NewReader(bytes.NewReader(r.trawler(t, "export", "--crawl", "shop", "--format", "csv"))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := func(name string) int { return slices.Index(rows[0], name) }
	for _, row := range rows[1:] {
		url := row[col("url")]
		for _, f := range []string{"name", "price", "currency", "sku", "tags"} {
			check("csv", url, "xpath", f, row[col("extract.xpath."+f)])
		}
		check("csv", url, "css", "name", row[col("extract.css.name")])
	}

	// Parquet: a column each, lists as lists.
	out := filepath.Join(r.dir, "shop.parquet")
	r.trawler(t, "export", "--crawl", "shop", "--format", "parquet", "--out", out)
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	type product struct {
		URL      string   `parquet:"url"`
		Name     string   `parquet:"extract_css_name"`
		Price    string   `parquet:"extract_xpath_price"`
		Currency string   `parquet:"extract_xpath_currency"`
		SKU      string   `parquet:"extract_css_sku"`
		Tags     []string `parquet:"extract_xpath_tags,list"`
	}
	got, err := parquet.Read[product](bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, g := range got {
		if _, ok := truth[g.URL]; ok {
			n++
			check("parquet", g.URL, "css", "name", g.Name)
			check("parquet", g.URL, "xpath", "price", g.Price)
			check("parquet", g.URL, "xpath", "currency", g.Currency)
			check("parquet", g.URL, "css", "sku", g.SKU)
			check("parquet", g.URL, "xpath", "tags", mustJSONString(g.Tags))
		}
	}
	if n != len(truth) {
		t.Errorf("parquet: %d of %d products", n, len(truth))
	}
	// The report counts the pages each rule matched and the fields that came back empty.
	r.trawler(t, "report", "--crawl", "shop", "--out", r.dir)
	rep, err := os.ReadFile(filepath.Join(r.dir, "shop.json"))
	if err != nil {
		t.Fatal(err)
	}
	var figures struct {
		Extraction []struct {
			Rule   string
			Pages  int
			Fields []struct {
				Name         string
				Found, Empty int
			}
		}
	}
	_ = json.Unmarshal(rep, &figures)
	if len(figures.Extraction) != 3 {
		t.Fatalf("the report's extraction: %+v", figures.Extraction)
	}
	for _, rs := range figures.Extraction {
		if rs.Pages != len(truth) {
			t.Errorf("rule %s matched %d pages; want %d", rs.Rule, rs.Pages, len(truth))
		}
		for _, f := range rs.Fields {
			if f.Found != len(truth) || f.Empty != 0 {
				t.Errorf("rule %s field %s: %d found, %d empty", rs.Rule, f.Name, f.Found, f.Empty)
			}
		}
	}
	// trawler extract runs the rules again over the stored bodies: the same values.
	said := string(r.trawler(t, "extract", "--crawl", "shop", "--rules", rules))
	if !strings.Contains(said, "css matched 9") || !strings.Contains(said, "xpath matched 9") {
		t.Errorf("trawler extract said %q", said)
	}
	if again := r.trawler(t, "export", "--crawl", "shop", "--fields", "url,extract"); !sameLines(firstExport, again) {
		t.Errorf("trawler extract gave other values than the crawl:\n%s\nthen\n%s", firstExport, again)
	}
	t.Logf("%d products: every truth value extracted by CSS and XPath, exported as JSON Lines, CSV and Parquet", seen)
}

// valueText is an extracted value as the truth writes it: a string as is, a list as JSON.
func valueText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var l []string
	if json.Unmarshal(raw, &l) == nil {
		return mustJSONString(l)
	}
	return string(raw)
}

func mustJSONString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// sameLines says whether two exports hold the same lines, in any order, each compared as
// JSON values (key order aside).
func sameLines(a, b []byte) bool {
	norm := func(x []byte) []string {
		var out []string
		for _, l := range strings.Split(strings.TrimSpace(string(x)), "\n") {
			var v any
			_ = json.Unmarshal([]byte(l), &v)
			out = append(out, mustJSONString(v))
		}
		slices.Sort(out)
		return out
	}
	return slices.Equal(norm(a), norm(b))
}
