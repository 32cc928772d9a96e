package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/content"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/segment"
	"github.com/trawlerdev/trawler/internal/testweb"
)

// Bodies that are not HTML are read for what they are, and lying headers do not fool the
// crawler (formats.test): a PDF's text is stored and its URI links crawled, also when it is
// served as text/html; HTML served as application/octet-stream is parsed; RSS (served as
// text/xml) and Atom feeds are link sources whose fresh items rank above old ones; text/plain
// is stored as text; an image and JSON are stored and not read, with their type recorded;
// X-Robots-Tag noindex and nofollow hold for PDFs; a compression bomb (ended by the reader's
// memory limit), a million-page tree and a truncated PDF each fail alone, and the crawl ends with nothing pending.
func TestNonHTMLContentIsReadAndHostilePDFsFailAlone(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.Pages, wc.Specials, wc.Formats = 1, 3, false, true
	wc.DefaultDelay = 100 * time.Millisecond
	s := newStackWithoutWorkers(t, wc)
	cfg := *s.cfg
	cfg.PDF = content.PDFLimits{Pages: 50, Timeout: 4 * time.Second, MemoryMB: 256}
	s.startWorkers(&cfg)
	p := s.crawl(crawl.Spec{Seeds: []string{"http://formats.test/"}, Scope: crawl.ScopeAny, Delay: crawl.Duration(wc.DefaultDelay),
		ProgressInterval: crawl.Duration(time.Second)}, 4*time.Minute)
	if p.State != "done" || p.Pending != 0 {
		t.Fatalf("crawl ended %s with %d pending: %+v", p.State, p.Pending, p)
	}
	ctx := context.Background()
	urls := s.urlRows(p.CrawlID, "http://formats.test")
	text := func(path string) string {
		t.Helper()
		key := urls[path].textKey
		if key == "" {
			return ""
		}
		b, err := segment.NewReader(s.blob, 64<<20).Get(ctx, key, 1<<20)
		if err != nil {
			t.Fatalf("%s: text: %v", path, err)
		}
		return string(b)
	}
	if got := text("/doc.pdf"); !strings.Contains(got, testweb.FormatsPDFText) || !strings.Contains(got, "See the appendix.") ||
		urls["/doc.pdf"].title != testweb.FormatsPDFText {
		t.Errorf("doc.pdf: title %q, text %q", urls["/doc.pdf"].title, got)
	}
	if got := text("/report"); !strings.Contains(got, "A report served as text/html.") {
		t.Errorf("a PDF served as text/html: text %q", got)
	}
	if got := text("/notes.txt"); !strings.Contains(got, "Plain text is stored as text.") {
		t.Errorf("notes.txt: text %q", got)
	}
	if got := text("/octet"); !strings.Contains(got, "HTML served as application/octet-stream.") {
		t.Errorf("HTML served as octet-stream: text %q", got)
	}
	for _, path := range testweb.FormatsLinked {
		if r := urls[path]; !r.hasDoc {
			t.Errorf("%s (linked only from a non-HTML body): %+v, want fetched and stored", path, r)
		}
	}
	if _, ok := urls["/not-a-link"]; ok {
		t.Error("a URL in plain text was followed")
	}
	if fresh, old := urls["/from-feed/new"].priority, urls["/from-feed/old"].priority; fresh <= old {
		t.Errorf("feed items: fresh priority %v, old %v; want the fresh one first", fresh, old)
	}
	for path, typ := range testweb.FormatsNotRead {
		if r := urls[path]; r.hasDoc || r.state != "done" || r.lastErr != "not read: "+typ {
			t.Errorf("%s: %+v, want done, not read, type %s", path, r, typ)
		}
	}
	if r := urls["/noindex.pdf"]; !r.hasDoc || !r.noindex || r.textKey != "" {
		t.Errorf("noindex.pdf: %+v", r)
	}
	if _, ok := urls["/only/pdf-nofollow"]; ok {
		t.Error("a nofollow PDF's link was admitted")
	}
	for _, path := range testweb.FormatsFailing {
		if r := urls[path]; r.hasDoc || r.state != "done" || !strings.Contains(r.lastErr, "not read") {
			t.Errorf("%s: %+v, want done with the reason it could not be read", path, r)
		}
	}
	// The bomb is stopped by the reader's memory limit (a limit the child process really has),
	// not by its time limit, and the worker that read it lives on to end the crawl.
	if r := urls["/bomb.pdf"]; !strings.Contains(r.lastErr, "over its memory limit (256 MiB)") {
		t.Errorf("/bomb.pdf: %q, want the memory limit named", r.lastErr)
	}
	for _, req := range s.web.Audit().Requests("formats.test") {
		if strings.HasPrefix(req.Path, "/only/") {
			t.Errorf("requested %s", req.Path)
		}
	}
	checkNoPoliteness(t, s)
}
