package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/segment"
	"github.com/trawlerdev/trawler/internal/testweb"
)

// Ordinary web bytes do not wedge a host: bytes.test serves a robots.txt with a Latin-1
// comment, header values with bytes >= 0x80, a page in ISO-8859-1 with NULs and a non-UTF-8
// lang attribute, and a gzipped sitemap behind a redirect whose <loc> comes in thousands of
// pieces and lists a page nothing links to. Every reachable page is stored with its text
// decoded, the disallowed page is never requested, and the crawl ends with nothing pending.
func TestCrawlOfHostileBytesEnds(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.Pages, wc.Specials, wc.Bytes = 1, 3, false, true
	wc.DefaultDelay = 200 * time.Millisecond
	s := newStack(t, wc)
	seeds := []string{"http://bytes.test/", "http://moved.test/", "http://h0000.test/"} // moved.test's robots.txt redirects to bytes.test's
	p := s.crawl(crawl.Spec{Seeds: seeds, Scope: crawl.ScopeAny, Delay: crawl.Duration(wc.DefaultDelay),
		ProgressInterval: crawl.Duration(time.Second)}, 3*time.Minute)
	if p.State != "done" || p.Pending != 0 {
		t.Fatalf("crawl ended %s with %d pending: %+v", p.State, p.Pending, p)
	}
	truth := s.web.Truth(seeds)
	if !slices.Contains(truth.Pages, "http://bytes.test/sitemap-only") || !slices.Contains(truth.Disallowed, "http://bytes.test/private/secret") {
		t.Fatalf("truth: %+v", truth)
	}
	ctx := context.Background()
	stored := map[string]string{} // url -> text key
	rows, err := s.store.Pool().Query(ctx, `SELECT u.url, coalesce(d.text_key, '') FROM documents d JOIN urls u USING (crawl_id, url_hash)
		WHERE d.crawl_id = $1`, p.CrawlID)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var u, k string
		_ = rows.Scan(&u, &k)
		stored[u] = k
	}
	rows.Close()
	for _, u := range truth.Pages {
		if _, ok := stored[u]; !ok {
			t.Errorf("not stored: %s", u)
		}
	}
	text, err := segment.NewReader(s.blob, 64<<20).Get(ctx, stored["http://bytes.test/latin1"], 1<<20)
	if err != nil || !strings.Contains(string(text), testweb.BytesLatin1Text) {
		t.Errorf("the ISO-8859-1 page's text is not decoded: %q %v", text, err)
	}
	var lang, head string
	_ = s.store.Pool().QueryRow(ctx, `SELECT coalesce(d.lang, '') FROM documents d JOIN urls u USING (crawl_id, url_hash)
		WHERE u.url = 'http://bytes.test/latin1'`).Scan(&lang)
	if !strings.HasPrefix(lang, "fr") {
		t.Errorf("lang %q", lang)
	}
	_ = s.store.Pool().QueryRow(ctx, `SELECT convert_from(f.response_head, 'LATIN1') FROM fetches f JOIN urls u USING (crawl_id, url_hash)
		WHERE u.url = 'http://bytes.test/header' AND f.status = 200`).Scan(&head)
	if !strings.Contains(head, "caf\u00e9 \u00ff") {
		t.Errorf("the response head is not kept byte for byte: %q", head)
	}
	if !slices.Contains(truth.Disallowed, "http://moved.test/private/x") || !slices.Contains(truth.Pages, "http://moved.test/page") {
		t.Fatalf("truth of moved.test: %+v", truth)
	}
	rep := s.web.Audit().Report()
	for _, h := range rep.Hosts {
		if (h.Host == "bytes.test" || h.Host == "moved.test") && (h.Disallowed != 0 || h.GapViolations != 0) {
			t.Errorf("%s: %d requests robots.txt forbids, %d too close together", h.Host, h.Disallowed, h.GapViolations)
		}
	}
	checkNoPoliteness(t, s)
}
