package testweb

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"net/http"
	"strings"

	"golang.org/x/text/encoding/charmap"
)

// ---- dup.test: exact and near-duplicate clusters, plus distinct pages. -----------------------

// Cluster is a set of URLs whose pages are duplicates of each other.
type Cluster struct {
	Kind string   `json:"kind"` // exact or near
	URLs []string `json:"urls"`
}

type dupSite struct {
	w        *Web
	pages    map[string][]byte
	clusters []Cluster
	paths    []string
}

func newDupSite(w *Web) *dupSite {
	s := &dupSite{w: w, pages: map[string][]byte{}}
	body := func(key uint64, title string, edit func([]string) []string) []byte {
		r := rng(w.cfg.Seed, 0xd0, key)
		paras := paragraphs(r, 8, 8) // ~500 words
		if edit != nil {
			paras = edit(append([]string(nil), paras...))
		}
		return doc{title: title, paragraphs: paras, links: []link{{href: "/", text: "home"}}}.render()
	}
	add := func(kind string, paths []string, bodies [][]byte) {
		c := Cluster{Kind: kind}
		for i, p := range paths {
			s.pages[p] = bodies[i]
			s.paths = append(s.paths, p)
			c.URLs = append(c.URLs, "http://dup.test"+p)
		}
		s.clusters = append(s.clusters, c)
	}
	for ci, n := range []int{3, 2} { // exact clusters: byte-identical bodies
		b := body(uint64(ci), fmt.Sprintf("exact cluster %d", ci), nil)
		var paths []string
		var bodies [][]byte
		for j := 1; j <= n; j++ {
			paths = append(paths, fmt.Sprintf("/exact/%c%d", 'a'+ci, j))
			bodies = append(bodies, b)
		}
		add("exact", paths, bodies)
	}
	for ci, n := range []int{4, 3} { // near clusters: one or two words differ out of ~500
		var paths []string
		var bodies [][]byte
		for j := 1; j <= n; j++ {
			j := j
			paths = append(paths, fmt.Sprintf("/near/%c%d", 'c'+ci, j))
			bodies = append(bodies, body(uint64(10+ci), fmt.Sprintf("near cluster %d", ci), func(p []string) []string {
				f := strings.Fields(p[j%len(p)])
				f[3] = fmt.Sprintf("revision%d", j)
				p[j%len(p)] = strings.Join(f, " ")
				p = append(p, fmt.Sprintf("Updated on day %d.", j))
				return p
			}))
		}
		add("near", paths, bodies)
	}
	for j := 1; j <= 5; j++ { // distinct pages of the same template
		p := fmt.Sprintf("/unique/%d", j)
		s.pages[p] = body(uint64(100+j), fmt.Sprintf("unique %d", j), nil)
		s.paths = append(s.paths, p)
	}
	return s
}

func (s *dupSite) host() string           { return "dup.test" }
func (s *dupSite) robots() robotsSpec     { return allowAll }
func (s *dupSite) sitemapPages() []string { return nil }

func (s *dupSite) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/" {
		listPage(w, "duplicates", s.paths...)
		return
	}
	b, ok := s.pages[r.URL.Path]
	if !ok || r.URL.RawQuery != "" {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(b)
}

func (s *dupSite) page(p, q string) pageInfo {
	if q != "" {
		return pageInfo{}
	}
	if p == "/" {
		return okLinks(s.host(), s.paths...)
	}
	if _, ok := s.pages[p]; ok {
		return okLinks(s.host(), "/")
	}
	return pageInfo{}
}

// ---- sitemap.test: pages only a sitemap announces. ---------------------------------------------

type sitemapSite struct{ w *Web }

func (s *sitemapSite) host() string { return "sitemap.test" }

func (s *sitemapSite) robots() robotsSpec {
	return robotsSpec{profile: "sitemap", status: 200,
		body: "User-agent: *\nDisallow:\n\nSitemap: http://sitemap.test/sitemap_index.xml\n"}
}

func (s *sitemapSite) sitemapPages() []string {
	out := []string{"http://sitemap.test/"}
	for i := 1; i <= 10; i++ {
		out = append(out, fmt.Sprintf("http://sitemap.test/only-in-sitemap/%d", i))
	}
	return out
}

func (s *sitemapSite) urlset(from, to int) []byte {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n")
	if from == 1 {
		b.WriteString("<url><loc>http://sitemap.test/</loc><changefreq>daily</changefreq><priority>1.0</priority></url>\n")
	}
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "<url><loc>http://sitemap.test/only-in-sitemap/%d</loc><lastmod>2026-11-%02dT10:00:00Z</lastmod><changefreq>weekly</changefreq><priority>0.%d</priority></url>\n", i, i, i%10)
	}
	b.WriteString("</urlset>\n")
	return []byte(b.String())
}

func (s *sitemapSite) serve(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch {
	case p == "/":
		listPage(w, "sitemap host", "/linked")
	case p == "/linked":
		listPage(w, "a linked page", "/")
	case p == "/sitemap_index.xml":
		w.Header().Set("Content-Type", "application/xml")
		_, _ = w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<sitemap><loc>http://sitemap.test/sitemap-1.xml.gz</loc><lastmod>2026-11-20T00:00:00Z</lastmod></sitemap>
<sitemap><loc>http://sitemap.test/sitemap-2.xml</loc></sitemap>
</sitemapindex>
`))
	case p == "/sitemap-1.xml.gz":
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		_, _ = zw.Write(s.urlset(1, 5))
		_ = zw.Close()
		w.Header().Set("Content-Type", "application/gzip")
		_, _ = w.Write(buf.Bytes())
	case p == "/sitemap-2.xml":
		w.Header().Set("Content-Type", "application/xml")
		_, _ = w.Write(s.urlset(6, 10))
	case s.page(p, r.URL.RawQuery).kind == pageOK:
		listPage(w, "only in the sitemap: "+p, "/")
	default:
		http.NotFound(w, r)
	}
}

func (s *sitemapSite) page(p, q string) pageInfo {
	switch {
	case q != "":
	case p == "/":
		return okLinks(s.host(), "/linked")
	case p == "/linked":
		return okLinks(s.host(), "/")
	case strings.HasPrefix(p, "/only-in-sitemap/"):
		var n int
		if _, err := fmt.Sscanf(p, "/only-in-sitemap/%d", &n); err == nil && n >= 1 && n <= 10 && p == fmt.Sprintf("/only-in-sitemap/%d", n) {
			return okLinks(s.host(), "/")
		}
	}
	return pageInfo{}
}

// ---- variants.test: one page under many spellings of its URL. ------------------------------

type variantsSite struct{ w *Web }

func (s *variantsSite) host() string           { return "variants.test" }
func (s *variantsSite) robots() robotsSpec     { return allowAll }
func (s *variantsSite) sitemapPages() []string { return nil }

var variantLinks = []string{
	"/page", "http://VARIANTS.test/page", "http://variants.test:80/page", "/./page", "/x/../page",
	"/%70age", "/page#top", "/page?utm_source=feed&utm_medium=rss", "page",
	"/item?b=2&a=1", "/item?a=1&b=2", "/item?a=1&utm_campaign=z&b=2",
}

// canonical maps a request to the page it names: "/", "/page" or "/item?a=1&b=2".
func (s *variantsSite) canonical(p, q string) string {
	c := canonicalPath(p)
	if cq := canonicalQuery(q); cq != "" {
		c += "?" + cq
	}
	switch c {
	case "/", "/page", "/item?a=1&b=2":
		return c
	}
	return ""
}

func (s *variantsSite) serve(w http.ResponseWriter, r *http.Request) {
	switch s.canonical(r.URL.EscapedPath(), r.URL.RawQuery) {
	case "/":
		listPage(w, "URL variants", variantLinks...)
	case "/page":
		listPage(w, "the one page", "/")
	case "/item?a=1&b=2":
		listPage(w, "the one item", "/")
	default:
		http.NotFound(w, r)
	}
}

func (s *variantsSite) page(p, q string) pageInfo {
	switch s.canonical(p, q) {
	case "/":
		return okLinks(s.host(), variantLinks...)
	case "/page", "/item?a=1&b=2":
		return okLinks(s.host(), "/")
	}
	return pageInfo{}
}

// ---- misc.test: <base href>, nofollow, meta robots, canonical, charsets, binary. ------------

type miscSite struct{ w *Web }

func (s *miscSite) host() string           { return "misc.test" }
func (s *miscSite) robots() robotsSpec     { return allowAll }
func (s *miscSite) sitemapPages() []string { return nil }

var miscLinks = []string{"/base/", "/nofollow", "/noindex", "/canonical-a", "/canonical-b", "/canonical-main", "/latin1", "/binary-html"}

func (s *miscSite) serve(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	canonical := `<link rel="canonical" href="http://misc.test/canonical-main">` + "\n"
	switch p {
	case "/":
		listPage(w, "markup cases", miscLinks...)
	case "/base/":
		htmlPage(w, doc{title: "base href", head: `<base href="http://misc.test/based/">` + "\n",
			paragraphs: []string{"Relative links resolve against the base."},
			links:      []link{{href: "one.html", text: "one"}, {href: "two.html", text: "two"}}})
	case "/nofollow":
		htmlPage(w, doc{title: "nofollow link", paragraphs: []string{"One link is nofollow."},
			links: []link{{href: "/nf-target", text: "do not follow", nofollow: true}, {href: "/followed", text: "follow"}}})
	case "/noindex":
		htmlPage(w, doc{title: "meta robots", head: `<meta name="robots" content="noindex, nofollow">` + "\n",
			paragraphs: []string{"Neither index this page nor follow its links."},
			links:      []link{{href: "/meta-nf-target", text: "not to follow"}}})
	case "/canonical-a", "/canonical-b":
		htmlPage(w, doc{title: "alternate " + p, head: canonical, paragraphs: []string{"The canonical version lives elsewhere."},
			links: []link{{href: "/", text: "home"}}})
	case "/latin1":
		body := doc{title: "café crème", paragraphs: []string{"Ça coûte très cher à Zürich, señor; naïve façade."},
			links: []link{{href: "/", text: "accueil"}}}.render()
		body = bytes.Replace(body, []byte(`<meta charset="utf-8">`), []byte(`<meta charset="iso-8859-1">`), 1)
		enc, err := charmap.ISO8859_1.NewEncoder().Bytes(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=iso-8859-1")
		_, _ = w.Write(enc)
	case "/binary-html":
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write(bytes.Repeat([]byte{0x89, 'P', 'N', 'G', 0, 0, 0xff, 0xfe, 0x00, 0x01}, 2000))
	case "/canonical-main", "/followed", "/nf-target", "/meta-nf-target", "/based/one.html", "/based/two.html":
		listPage(w, "plain "+p, "/")
	default:
		http.NotFound(w, r)
	}
}

func (s *miscSite) page(p, q string) pageInfo {
	if q != "" {
		return pageInfo{}
	}
	switch p {
	case "/":
		return okLinks(s.host(), miscLinks...)
	case "/base/":
		return pageInfo{kind: pageOK, links: []string{"http://misc.test/based/one.html", "http://misc.test/based/two.html"}}
	case "/nofollow":
		return okLinks(s.host(), "/followed")
	case "/noindex":
		return pageInfo{kind: pageOK}
	case "/canonical-a", "/canonical-b", "/latin1":
		return okLinks(s.host(), "/")
	case "/binary-html":
		return pageInfo{kind: pageOther}
	case "/canonical-main", "/followed", "/nf-target", "/meta-nf-target", "/based/one.html", "/based/two.html":
		return okLinks(s.host(), "/")
	}
	return pageInfo{}
}
