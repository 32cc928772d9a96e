package fidelity

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/trawlerdev/trawler/internal/config"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/fetch"
	"github.com/trawlerdev/trawler/internal/netguard"
	"github.com/trawlerdev/trawler/internal/policy"
	"github.com/trawlerdev/trawler/internal/render"
	"github.com/trawlerdev/trawler/internal/store"
	"github.com/trawlerdev/trawler/internal/testenv"
	"github.com/trawlerdev/trawler/internal/urlnorm"
)

// A live look's requests are judged as the crawl judges a page's requisite and keyed by their
// normalized URL: a redirect whose Location hides another host behind a fragment that
// suffix-matches the crawl's domain gets no header of the crawl's, a denied host is not asked,
// and the page's own answer is what the look reports.
func TestLiveRequestsKeepTheCrawlsRules(t *testing.T) {
	var mu sync.Mutex
	asked := map[string]string{} // host+path → the secret header it got
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked[r.Host+r.URL.Path] = r.Header.Get("X-Key")
		mu.Unlock()
		switch r.Host + r.URL.Path {
		case "www.site.test/r":
			http.Redirect(w, r, "http://evil.test#.site.test/", http.StatusFound)
		case "www.site.test/gone":
			http.NotFound(w, r)
		default:
			_, _ = w.Write([]byte("ok"))
		}
	}))
	defer srv.Close()
	rules, err := config.ParseConnectTo("*.test=" + strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	db, _ := testenv.Postgres(t)
	norm := urlnorm.New(urlnorm.Default())
	crawls := &policy.Crawls{Norm: norm}
	ci := crawls.Compile("c", crawl.Spec{Seeds: []string{"http://www.site.test/"}, Scope: crawl.ScopeDomain,
		Headers: map[string]string{"X-Key": "s3cret"}, DenyHosts: []string{"denied.test"}}.WithDefaults())
	m := &Measurer{Store: store.New(db), Norm: norm, Crawls: crawls,
		Client: fetch.New(fetch.Options{Dialer: netguard.New(netguard.Options{ConnectTo: rules})})}
	l := newLive(m, ci)
	l.delay = 0
	ctx := context.Background()

	l.look("http://www.site.test/r")
	if a := l.serve(ctx, render.Request{URL: "http://www.site.test/r"}); a.Block != "" || a.Status != 200 {
		t.Fatalf("the redirected request: %+v", a)
	}
	mu.Lock()
	if asked["www.site.test/r"] != "s3cret" {
		t.Errorf("the crawl's own host did not get its header")
	}
	if got, ok := asked["evil.test/"]; !ok || got != "" {
		t.Errorf("the host behind the fragment was asked %v with header %q; want asked, without it", ok, got)
	}
	mu.Unlock()
	if why := l.pageAnswer(); why != "" {
		t.Errorf("the page answered 200 after its redirect, yet the look says %q", why)
	}
	if a := l.serve(ctx, render.Request{URL: "http://denied.test/x.png"}); a.Block != policy.RejectDenied {
		t.Errorf("a denied host: %+v", a)
	}
	l.look("http://www.site.test/gone")
	l.serve(ctx, render.Request{URL: "http://www.site.test/gone#top"})
	if why := l.pageAnswer(); !strings.Contains(why, "404") {
		t.Errorf("a page gone live: the look says %q", why)
	}
}
