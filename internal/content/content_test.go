package content_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/content"
	"github.com/trawlerdev/trawler/internal/testweb"
)

func TestSniff(t *testing.T) {
	pdf := testweb.PDF([][]string{{"x"}}, nil)
	html := []byte("<!DOCTYPE html><html><head><title>t</title></head><body>hi</body></html>")
	rss := []byte(`<?xml version="1.0"?><rss version="2.0"><channel><title>t</title></channel></rss>`)
	atom := []byte(`<?xml version="1.0" encoding="utf-8"?>` + "\n<!-- a comment -->\n" + `<feed xmlns="http://www.w3.org/2005/Atom"><title>t</title></feed>`)
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	for _, c := range []struct {
		name, ct string
		body     []byte
		want     content.Kind
	}{
		{"html", "text/html; charset=utf-8", html, content.HTML},
		{"xhtml", "application/xhtml+xml", html, content.HTML},
		{"html as octet-stream", "application/octet-stream", html, content.HTML},
		{"html without a type", "", html, content.HTML},
		{"html as text/plain", "text/plain", html, content.HTML},
		{"pdf", "application/pdf", pdf, content.PDF},
		{"pdf as text/html", "text/html", pdf, content.PDF},
		{"pdf as octet-stream", "application/octet-stream", pdf, content.PDF},
		{"declared pdf that is not", "application/pdf", []byte("<html>oops</html>"), content.Other},
		{"rss", "application/rss+xml", rss, content.Feed},
		{"rss as text/xml", "text/xml", rss, content.Feed},
		{"rss as text/html", "text/html", rss, content.Feed},
		{"atom with prolog and comment", "application/atom+xml", atom, content.Feed},
		{"atom as application/xml", "application/xml", atom, content.Feed},
		{"other xml", "application/xml", []byte(`<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"/>`), content.Other},
		{"plain text", "text/plain; charset=utf-8", []byte("Just some words.\nAnd more."), content.Text},
		{"png as html", "text/html", png, content.Other},
		{"png", "image/png", png, content.Other},
		{"json", "application/json", []byte(`{"a":1}`), content.Other},
		{"binary as text/plain", "text/plain", png, content.Other},
		{"bad header", "text/html;;;charset===", html, content.HTML},
	} {
		if got := content.Sniff(c.ct, c.body); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

func TestPlainText(t *testing.T) {
	title, text, cs := content.PlainText([]byte("\n\n  Caf\xe9 menu \x00\nline two\n"), "text/plain; charset=iso-8859-1")
	if title != "Café menu" || text != "Café menu \nline two" || cs != "windows-1252" {
		t.Errorf("%q %q %q", title, text, cs)
	}
	_, text, _ = content.PlainText([]byte(strings.Repeat("é", content.MaxTextBytes)), "text/plain; charset=utf-8")
	if len(text) > content.MaxTextBytes || !strings.HasSuffix(text, "é") {
		t.Errorf("cap: %d bytes, ends %q", len(text), text[len(text)-4:])
	}
}

func TestParseFeed(t *testing.T) {
	base, _ := url.Parse("http://news.test/feed.xml")
	rss := `<?xml version="1.0" encoding="ISO-8859-1"?><rss version="2.0"><channel><title>News caf` + "\xe9" + `</title>
		<link>http://news.test/</link>
		<item><title>one</title><link>/a/1</link><pubDate>Mon, 02 Nov 2026 10:00:00 +0000</pubDate></item>
		<item><title>two</title><guid isPermaLink="true">http://news.test/a/2</guid><pubDate>Tue, 3 Nov 2026 10:00:00 GMT</pubDate></item>
		<item><title>no link</title></item>
		<item><link>javascript:alert(1)</link></item>
		<item><link>http://news.test/a/3#frag</link><dc:date>2026-11-04T08:00:00Z</dc:date></item>
		</channel></rss>`
	doc, err := content.ParseFeed([]byte(rss), "application/rss+xml", base, 100)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"http://news.test/a/1 2026-11-02", "http://news.test/a/2 2026-11-03", "http://news.test/a/3 2026-11-04"}
	if got := items(doc); strings.Join(got, "|") != strings.Join(want, "|") || doc.Title != "News café" {
		t.Errorf("rss: %q %q", doc.Title, got)
	}
	atom := `<feed xmlns="http://www.w3.org/2005/Atom"><title>A</title><link href="http://news.test/"/>
		<entry><title>x</title><link rel="edit" href="/edit/1"/><link href="/b/1"/><updated>2026-11-05T00:00:00Z</updated>
			<published>2026-11-01T00:00:00Z</published></entry>
		<entry><link rel="alternate" type="text/html" href="http://news.test/b/2"/></entry>
		<entry><link rel="enclosure" href="/b/3.mp3"/></entry>
		</feed>`
	if doc, err = content.ParseFeed([]byte(atom), "", base, 100); err != nil {
		t.Fatal(err)
	}
	if got := items(doc); strings.Join(got, "|") != "http://news.test/b/1 2026-11-05|http://news.test/b/2 0001-01-01" {
		t.Errorf("atom: %q", got)
	}
	rdf := `<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/">
		<channel><title>R</title></channel><item rdf:about="http://news.test/c/1"><link>http://news.test/c/1</link></item></rdf:RDF>`
	if doc, err = content.ParseFeed([]byte(rdf), "", base, 100); err != nil || len(doc.Items) != 1 {
		t.Errorf("rdf: %+v %v", doc, err)
	}
	// Broken XML keeps the items before the break; a cap on items holds.
	broken := `<rss><channel><item><link>/d/1</link></item><item><link>/d/2</link></item><item><link>/d/3<</rss`
	if doc, err = content.ParseFeed([]byte(broken), "", base, 100); err != nil || len(doc.Items) < 2 {
		t.Errorf("broken: %+v %v", doc, err)
	}
	if doc, _ = content.ParseFeed([]byte(rss), "", base, 1); len(doc.Items) != 1 {
		t.Errorf("max items: %d", len(doc.Items))
	}
	if _, err = content.ParseFeed([]byte("<html><body>no</body></html>"), "", base, 100); err == nil {
		t.Error("html read as a feed")
	}
}

func items(doc *content.FeedDoc) []string {
	var out []string
	for _, it := range doc.Items {
		out = append(out, it.URL+" "+it.Date.UTC().Format("2006-01-02"))
	}
	return out
}

// PDFs: text and URI links from a good one; hostile ones (a compression bomb, a page tree of
// a million entries with a broken xref table, a truncated file, garbage) fail or finish within
// their limits, never taking the worker with them.
func TestReadPDF(t *testing.T) {
	ctx := context.Background()
	lim := content.PDFLimits{Pages: 3, Timeout: 5 * time.Second, MemoryMB: 256}
	pages := [][]string{{"Annual report (draft)", "Revenue grew."}, {"Second page"}, {"Third page"}, {"Fourth page, past the limit"}}
	doc, err := content.ReadPDF(ctx, testweb.PDF(pages, []string{"http://pdf.test/linked", "https://other.test/x?a=1"}), lim)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Title != "Annual report (draft)" || !strings.Contains(doc.Text, "Revenue grew.") || !strings.Contains(doc.Text, "Third page") ||
		strings.Contains(doc.Text, "Fourth") {
		t.Errorf("text %q (title %q)", doc.Text, doc.Title)
	}
	if strings.Join(doc.Links, " ") != "http://pdf.test/linked https://other.test/x?a=1" {
		t.Errorf("links %q", doc.Links)
	}
	// The bomb: 600 KB that inflate to one 600 MiB string, which poppler holds at once (over
	// 1 GB of RSS with no limit, 15 s here). The memory limit ends it, long before the time
	// limit would, and the reason says so.
	bombLim := lim
	bombLim.Timeout = 60 * time.Second
	start := time.Now()
	_, err = content.ReadPDF(ctx, testweb.PDFBomb(600<<20), bombLim)
	if err == nil || !strings.Contains(err.Error(), "over its memory limit (256 MiB)") {
		t.Errorf("the memory bomb: %v, want the memory limit hit", err)
	}
	t.Logf("memory bomb: %s, %v", time.Since(start), err)
	for name, body := range map[string][]byte{
		"bomb":       testweb.PDFBomb(64 << 20),
		"many pages": testweb.PDFManyPages(1_000_000),
		"truncated":  testweb.PDF(pages, nil)[:300],
		"garbage":    []byte("%PDF-1.7\n\x00\xff\xfe garbage"),
	} {
		start := time.Now()
		doc, err := content.ReadPDF(ctx, body, lim)
		took := time.Since(start)
		if took > lim.Timeout+3*time.Second {
			t.Errorf("%s: %s, over its limit", name, took)
		}
		if err == nil && len(doc.Text) > content.MaxTextBytes {
			t.Errorf("%s: %d bytes of text", name, len(doc.Text))
		}
		t.Logf("%s (%d bytes): %s, err %v", name, len(body), took, err)
	}
}
