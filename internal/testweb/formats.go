package testweb

import (
	"net/http"
	"strings"
	"sync"
	"time"
)

// ---- formats.test: bodies that are not HTML, and headers that lie (Config.Formats). ---------
//
// A PDF with URI links, a PDF served as text/html, HTML served as application/octet-stream,
// RSS served as text/xml with a fresh and an old item, Atom, text/plain, an image and JSON
// (stored, not read), a noindex PDF and a nofollow PDF (X-Robots-Tag), and hostile PDFs: a
// compression bomb, a page tree of a million pages with a broken xref table, a truncated file.
// Its front page is linked from nowhere: seed it.

type formatsSite struct {
	w        *Web
	bombOnce sync.Once
	bomb     []byte
}

func (s *formatsSite) host() string { return "formats.test" }

func (s *formatsSite) robots() robotsSpec {
	return robotsSpec{profile: "formats", status: 404, rules: ruleset{}}
}

func (s *formatsSite) sitemapPages() []string { return nil }

// FormatsPDFText is a phrase of formats.test/doc.pdf's text.
const FormatsPDFText = "Quarterly figures for the formats test"

// FormatsLinked lists the pages formats.test links only from its non-HTML bodies (and its
// octet-stream HTML): a crawler that reads them all fetches each.
var FormatsLinked = []string{"/from-pdf/1", "/from-pdf/2", "/from-pdf/3", "/from-feed/new", "/from-feed/old",
	"/from-atom/1", "/from-octet"}

// FormatsNotRead lists formats.test's bodies a crawler stores and does not read, by type.
var FormatsNotRead = map[string]string{"/image.png": "image/png", "/data.json": "application/json"}

// FormatsFailing lists formats.test's hostile PDFs: each fails alone.
var FormatsFailing = []string{"/bomb.pdf", "/many.pdf", "/broken.pdf"}

func (s *formatsSite) serve(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch p {
	case "/":
		hrefs := []string{"/doc.pdf", "/report", "/feed", "/atom.xml", "/notes.txt", "/octet", "/noindex.pdf", "/nofollow.pdf"}
		for path := range FormatsNotRead {
			hrefs = append(hrefs, path)
		}
		listPage(w, "formats", append(hrefs, FormatsFailing...)...)
	case "/doc.pdf":
		w.Header().Set("Content-Type", "application/pdf")
		_, _ = w.Write(PDF([][]string{{FormatsPDFText, "Revenue grew in every region."}, {"See the appendix."}},
			[]string{"/from-pdf/1", "http://formats.test/from-pdf/2"}))
	case "/report": // a PDF the server calls HTML
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(PDF([][]string{{"A report served as text/html."}}, []string{"http://formats.test/from-pdf/3"}))
	case "/noindex.pdf":
		w.Header().Set("Content-Type", "application/pdf")
		w.Header().Set("X-Robots-Tag", "noindex")
		_, _ = w.Write(PDF([][]string{{"A PDF that must not be indexed."}}, nil))
	case "/nofollow.pdf":
		w.Header().Set("Content-Type", "application/pdf")
		w.Header().Set("X-Robots-Tag", "nofollow")
		_, _ = w.Write(PDF([][]string{{"A PDF whose links must not be followed."}}, []string{"http://formats.test/only/pdf-nofollow"}))
	case "/feed": // RSS served as text/xml, one fresh item and one old
		w.Header().Set("Content-Type", "text/xml")
		now := time.Now().UTC()
		_, _ = w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel><title>Formats news</title>
			<link>http://formats.test/</link>
			<item><title>New</title><link>http://formats.test/from-feed/new</link><pubDate>` + now.Format(time.RFC1123Z) + `</pubDate></item>
			<item><title>Old</title><link>/from-feed/old</link><pubDate>Mon, 07 Jan 2019 10:00:00 +0000</pubDate></item>
			</channel></rss>`))
	case "/atom.xml":
		w.Header().Set("Content-Type", "application/atom+xml")
		_, _ = w.Write([]byte(`<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom"><title>Formats atom</title>
			<entry><title>One</title><link rel="alternate" href="/from-atom/1"/><updated>2026-01-01T00:00:00Z</updated></entry></feed>`))
	case "/notes.txt":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("Formats notes\n\nPlain text is stored as text. http://formats.test/not-a-link is not followed.\n"))
	case "/octet": // HTML the server calls a byte stream
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = w.Write(doc{title: "octet", paragraphs: []string{"HTML served as application/octet-stream."},
			links: []link{{href: "/from-octet", text: "next"}}}.render())
	case "/image.png":
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00"))
	case "/data.json":
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"links": ["http://formats.test/only/json"]}`))
	case "/bomb.pdf":
		s.bombOnce.Do(func() { s.bomb = PDFBomb(512 << 20) })
		w.Header().Set("Content-Type", "application/pdf")
		_, _ = w.Write(s.bomb)
	case "/many.pdf":
		w.Header().Set("Content-Type", "application/pdf")
		_, _ = w.Write(PDFManyPages(200_000))
	case "/broken.pdf":
		w.Header().Set("Content-Type", "application/pdf")
		_, _ = w.Write(PDF([][]string{{"cut short"}}, nil)[:200])
	default:
		if strings.HasPrefix(p, "/from-") || strings.HasPrefix(p, "/only/") {
			htmlPage(w, doc{title: p, paragraphs: []string{"A page at " + p + " of formats.test."}, links: []link{{href: "/", text: "home"}}})
			return
		}
		http.NotFound(w, r)
	}
}

// page keeps formats.test out of the truth: its test says what it expects itself.
func (s *formatsSite) page(p, q string) pageInfo { return pageInfo{kind: pageOther} }
