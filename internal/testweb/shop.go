package testweb

import (
	"fmt"
	"html"
	"net/http"
	"strconv"
	"strings"
)

// ---- shop.test: product pages to extract fields from (Config.Shop). -------------------------
//
// shop.test's front page links ShopProducts' pages, /p/1 … /p/N, drawn in three layouts (a
// heading and spans; microdata in a div; a specification table), each with the same facts
// in JSON-LD (schema.org Product) and OpenGraph tags. ShopProducts is the truth: the values a
// correct rule set extracts. Seed http://shop.test/.

// ShopHost is the shop's host name.
const ShopHost = "shop.test"

// Product is one product page's truth.
type Product struct {
	URL, Name, Price, Currency, SKU string
	Tags                            []string
}

// ShopProducts are the shop's product pages and the values on them.
func ShopProducts() []Product {
	var out []Product
	for i := 1; i <= 9; i++ {
		out = append(out, Product{URL: fmt.Sprintf("http://%s/p/%d", ShopHost, i), Name: fmt.Sprintf("Lamp model %d “Ørsted”", i),
			Price: fmt.Sprintf("%d.%02d", 10+i, i*7%100), Currency: []string{"EUR", "USD", "GBP"}[i%3], SKU: fmt.Sprintf("SKU-%04d", i*37),
			Tags: []string{"light", []string{"desk", "floor", "wall"}[i%3], "model-" + strconv.Itoa(i)}})
	}
	return out
}

type shopSite struct{ w *Web }

func (s *shopSite) host() string                 { return ShopHost }
func (s *shopSite) robots() robotsSpec           { return allowAll }
func (s *shopSite) sitemapPages() []string       { return nil }
func (s *shopSite) page(string, string) pageInfo { return pageInfo{kind: pageOther} }

func (s *shopSite) serve(w http.ResponseWriter, r *http.Request) {
	products := ShopProducts()
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if r.URL.Path == "/" {
		var b strings.Builder
		b.WriteString("<!DOCTYPE html><html><head><title>The shop</title></head><body><h1>Products</h1><ul>")
		for _, p := range products {
			fmt.Fprintf(&b, `<li><a href="%s">%s</a></li>`, strings.TrimPrefix(p.URL, "http://"+ShopHost), html.EscapeString(p.Name))
		}
		b.WriteString("</ul></body></html>")
		_, _ = w.Write([]byte(b.String()))
		return
	}
	n, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/p/"))
	if err != nil || n < 1 || n > len(products) {
		http.NotFound(w, r)
		return
	}
	_, _ = w.Write([]byte(productPage(products[n-1], n%3)))
}

// productPage draws a product in one of three layouts, its facts also in JSON-LD and
// OpenGraph.
func productPage(p Product, layout int) string {
	e := html.EscapeString
	var tags strings.Builder
	for _, t := range p.Tags {
		fmt.Fprintf(&tags, `<li class="tag"> %s </li>`, e(t))
	}
	ld := fmt.Sprintf(`{"@context": "https://schema.org", "@type": "Product", "name": %q, "sku": %q, "offers": {"@type": "Offer", "price": %q, "priceCurrency": %q}}`,
		p.Name, p.SKU, p.Price, p.Currency)
	head := fmt.Sprintf(`<title>%s – the shop</title><meta property="og:title" content="%s"><meta property="og:type" content="product">
<meta name="description" content="%s, %s %s"><script type="application/ld+json">%s</script>`, e(p.Name), e(p.Name), e(p.Name), e(p.Price), e(p.Currency), ld)
	var body string
	switch layout {
	case 0: // a heading and spans
		body = fmt.Sprintf(`<h1 class="name">%s</h1><p>Price: <span class="price" data-currency="%s">%s</span></p>
<p class="sku">SKU <b>%s</b></p><ul class="tags">%s</ul>`, e(p.Name), e(p.Currency), e(p.Price), e(p.SKU), tags.String())
	case 1: // microdata in a div
		body = fmt.Sprintf(`<div id="product" itemscope itemtype="https://schema.org/Product"><h2 itemprop="name">%s</h2>
<div itemprop="offers" itemscope><meta itemprop="priceCurrency" content="%s"><span class="amount" itemprop="price">%s</span></div>
<span itemprop="sku">%s</span><ul class="tags">%s</ul></div>`, e(p.Name), e(p.Currency), e(p.Price), e(p.SKU), tags.String())
	default: // a specification table
		body = fmt.Sprintf(`<table class="spec"><caption>%s</caption><tr><th>Price</th><td>%s</td></tr><tr><th>Currency</th><td>%s</td></tr>
<tr><th>SKU</th><td>%s</td></tr></table><ul class="tags">%s</ul>`, e(p.Name), e(p.Price), e(p.Currency), e(p.SKU), tags.String())
	}
	return "<!DOCTYPE html><html><head>" + head + "</head><body><nav><a href=\"/\">shop</a></nav>" + body + "</body></html>"
}
