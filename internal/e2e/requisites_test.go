package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/store"
	"github.com/trawlerdev/trawler/internal/testweb"
	"github.com/trawlerdev/trawler/internal/warc"
)

// A page's requisites are archived with it (issue 48): style.test's pages need a stylesheet
// that imports another and names a font and a background, responsive images, an icon, an
// <object> document and a script on cdn.test. A crawl scoped to style.test, whose allow
// patterns take its two pages only, archives every one of them as a response record — the
// CDN's script included, on cdn.test's own schedule — with 0 politeness violations; the
// shared stylesheet is fetched once; the <object> document's link is never followed; and the
// crawl's own header goes to style.test only, never to the CDN.
// Requisites off, none is fetched.
func TestRequisitesAreArchivedWithThePage(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.Pages, wc.Specials, wc.Requisites = 1, 3, false, true
	wc.DefaultDelay = 100 * time.Millisecond
	s := newStack(t, wc)
	spec := crawl.Spec{Seeds: []string{"http://style.test/"}, Scope: crawl.ScopeHost, Delay: crawl.Duration(wc.DefaultDelay),
		AllowPatterns: []string{`^http://style\.test/(page2)?$`}, ProgressInterval: crawl.Duration(time.Second),
		Headers: map[string]string{testweb.SecretHeader: "k3y"}}
	p := s.crawl(spec, 3*time.Minute)
	if p.State != "done" || p.Pending != 0 {
		t.Fatalf("crawl ended %s with %d pending: %+v", p.State, p.Pending, p)
	}
	recs, _ := warcRecords(t, s, p.CrawlID)
	archived := map[string]int{}
	for _, r := range recs {
		// (identical images are one response and revisits of it: both are the file archived)
		if (r.Type == warc.TypeResponse || r.Type == warc.TypeRevisit) && r.Status == 200 {
			archived[r.URI]++
		}
	}
	for _, u := range append([]string{"http://style.test/", "http://style.test/page2"}, testweb.RequisiteURLs...) {
		if archived[u] != 1 {
			t.Errorf("%s archived %d times, want once", u, archived[u])
		}
	}
	if archived[testweb.NeverFollowed] != 0 {
		t.Errorf("a requisite's link was followed: %s archived", testweb.NeverFollowed)
	}
	for _, r := range s.web.Audit().Requests("style.test") {
		if r.Path == "/never-followed" {
			t.Errorf("a requisite's link was requested")
		}
	}
	cdn := s.web.Audit().Requests("cdn.test")
	if len(cdn) != 2 { // robots.txt and the script
		t.Errorf("cdn.test asked %d times, want robots.txt and the script", len(cdn))
	}
	for _, r := range cdn {
		if r.Secret {
			t.Errorf("the crawl's header went to cdn.test (%s)", r.Path)
		}
	}
	if rs := s.web.Audit().Requests("style.test"); len(rs) == 0 || !rs[len(rs)-1].Secret {
		t.Errorf("the crawl's header did not go to style.test")
	}
	checkNoPoliteness(t, s)
	checkWARC(t, s, p.CrawlID)
	fig, err := s.store.Inspect().CrawlFigures(context.Background(), p.CrawlID)
	if err != nil {
		t.Fatal(err)
	}
	if len(fig.Requisites) != 1 || fig.Requisites[0] != (store.Count{Key: "archived", N: int64(len(testweb.RequisiteURLs))}) {
		t.Errorf("the report's requisites: %+v, want all %d archived", fig.Requisites, len(testweb.RequisiteURLs))
	}

	// Off: the pages alone.
	off := spec
	off.Requisites = &crawl.Requisites{Off: true}
	q := s.crawl(off, 2*time.Minute)
	if q.State != "done" {
		t.Fatalf("crawl without requisites: %+v", q)
	}
	urls := s.urlRows(q.CrawlID, "")
	for _, u := range testweb.RequisiteURLs {
		if _, ok := urls[u]; ok {
			t.Errorf("without requisites the crawl took %s", u)
		}
	}
	if !urls["http://style.test/page2"].hasDoc {
		t.Errorf("without requisites the pages were not crawled: %v", urls)
	}
}
