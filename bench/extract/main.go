// Command extract compares main-text extractors on real pages: Trawler's own (internal/parse)
// and go-trafilatura, on the PostgreSQL and Python HTML manuals Debian ships
// (postgresql-doc-15, python3.11-doc). Each page's reference text is what the site itself
// marks as its content: PostgreSQL's page body without its navigation header and footer,
// Sphinx's div[role=main] without its permalink marks. Scores are word-level precision and
// recall (multiset overlap) against it, summed over the pages.
//
//	go run . [-pg DIR] [-py DIR] [-every N]
//
// A module of its own, so go-trafilatura's dependencies stay out of Trawler's.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/PuerkitoBio/goquery"
	trafilatura "github.com/markusmobius/go-trafilatura"

	"github.com/trawlerdev/trawler/internal/parse"
)

type page struct {
	site, path string
	body       []byte
	gold       map[string]int
	goldWords  int
}

type score struct {
	overlap, extracted, gold int
	took                     time.Duration
	pages, empty             int
}

func (s score) precision() float64 { return ratio(s.overlap, s.extracted) }
func (s score) recall() float64    { return ratio(s.overlap, s.gold) }
func (s score) f1() float64 {
	p, r := s.precision(), s.recall()
	if p+r == 0 {
		return 0
	}
	return 2 * p * r / (p + r)
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func main() {
	pgDir := flag.String("pg", "/usr/share/doc/postgresql-doc-15/html", "PostgreSQL manual (HTML)")
	pyDir := flag.String("py", "/usr/share/doc/python3.11/html", "Python manual (HTML)")
	every := flag.Int("every", 8, "take every Nth page of each manual")
	flag.Parse()
	var pages []page
	for _, site := range []struct {
		name, dir string
		gold      func(*goquery.Document) string
	}{{"postgresql", *pgDir, postgresGold}, {"python", *pyDir, sphinxGold}} {
		got, err := load(site.name, site.dir, *every, site.gold)
		if err != nil {
			fmt.Fprintln(os.Stderr, "extract:", err)
			os.Exit(1)
		}
		pages = append(pages, got...)
	}
	extractors := []struct {
		name string
		run  func(p page) string
	}{
		{"trawler (internal/parse)", func(p page) string {
			u, _ := url.Parse("http://" + p.site + ".test/" + p.path)
			res, err := parse.Parse(p.body, "text/html; charset=utf-8", u, 1000, 0, "trawlerbot")
			if err != nil {
				return ""
			}
			return res.Text
		}},
		{"go-trafilatura v1.12.2", func(p page) string {
			u, _ := url.Parse("http://" + p.site + ".test/" + p.path)
			res, err := trafilatura.Extract(bytes.NewReader(p.body), trafilatura.Options{OriginalURL: u, EnableFallback: true})
			if err != nil || res == nil {
				return ""
			}
			return res.ContentText
		}},
	}
	fmt.Printf("%d pages: %d PostgreSQL, %d Python\n\n", len(pages), count(pages, "postgresql"), count(pages, "python"))
	fmt.Println("| extractor | site | pages | precision | recall | F1 | empty | time/page |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	for _, ex := range extractors {
		bySite := map[string]*score{"postgresql": {}, "python": {}, "all": {}}
		for _, p := range pages {
			start := time.Now()
			text := ex.run(p)
			took := time.Since(start)
			got := words(text)
			n := 0
			for _, c := range got {
				n += c
			}
			overlap := 0
			for w, c := range got {
				overlap += min(c, p.gold[w])
			}
			for _, k := range []string{p.site, "all"} {
				s := bySite[k]
				s.overlap, s.extracted, s.gold, s.took, s.pages = s.overlap+overlap, s.extracted+n, s.gold+p.goldWords, s.took+took, s.pages+1
				if n == 0 {
					s.empty++
				}
			}
		}
		for _, k := range []string{"postgresql", "python", "all"} {
			s := bySite[k]
			fmt.Printf("| %s | %s | %d | %.3f | %.3f | %.3f | %d | %.1f ms |\n", ex.name, k, s.pages, s.precision(), s.recall(), s.f1(),
				s.empty, float64(s.took.Microseconds())/1000/float64(max(s.pages, 1)))
		}
	}
}

func count(pages []page, site string) int {
	n := 0
	for _, p := range pages {
		if p.site == site {
			n++
		}
	}
	return n
}

// load reads every Nth HTML page of a manual (in path order) with its reference text.
func load(site, dir string, every int, gold func(*goquery.Document) string) ([]page, error) {
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".html") && !strings.Contains(p, "/_") && !strings.Contains(p, "genindex") {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s manual at %s: %w (Debian: apt-get install postgresql-doc-15 python3.11-doc)", site, dir, err)
	}
	sort.Strings(paths)
	var out []page
	for i := 0; i < len(paths); i += max(every, 1) {
		body, err := os.ReadFile(paths[i])
		if err != nil {
			return nil, err
		}
		doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		g := words(gold(doc))
		n := 0
		for _, c := range g {
			n += c
		}
		if n < 50 { // a redirect stub or an index with nothing to read
			continue
		}
		rel, _ := filepath.Rel(dir, paths[i])
		out = append(out, page{site: site, path: rel, body: body, gold: g, goldWords: n})
	}
	return out, nil
}

// postgresGold is a PostgreSQL manual page's content: its body without the navigation
// header and footer.
func postgresGold(doc *goquery.Document) string {
	body := doc.Find("body").Clone()
	body.Find(".navheader, .navfooter, script, style").Remove()
	return body.Text()
}

// sphinxGold is a Sphinx page's content: div[role=main] without permalink marks.
func sphinxGold(doc *goquery.Document) string {
	main := doc.Find(`div[role="main"]`).First().Clone()
	main.Find("a.headerlink, script, style").Remove()
	return main.Text()
}

// words is the multiset of a text's words (letters and digits, lower case).
func words(text string) map[string]int {
	out := map[string]int{}
	for _, w := range strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		out[strings.ToLower(w)]++
	}
	return out
}
