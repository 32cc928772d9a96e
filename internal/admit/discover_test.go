package admit

import (
	"net/url"
	"sort"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/policy"
	"github.com/trawlerdev/trawler/internal/store"
	"github.com/trawlerdev/trawler/internal/urlnorm"
)

// One pass over found URLs decides each the same way whatever found it: resolved against the
// base, one candidate per key, nofollow and non-HTTP links kept out uncounted, the crawl's
// rules and the outlink cap counted by reason; a feed item's date and a sitemap's tuning shape
// the candidate before it is judged.
func TestDiscoverJudgesEveryFoundURLOneWay(t *testing.T) {
	c := &policy.Crawls{Norm: urlnorm.New(urlnorm.Default()), Ports: []int{80, 443}}
	ci := c.Compile("c", crawl.Spec{Seeds: []string{"http://a.test/"}, Scope: crawl.ScopeHost, MaxDepth: 3}.WithDefaults())
	base, _ := url.Parse("http://a.test/dir/page")
	d := Discover(c, ci, base, From{Depth: 2, Source: crawl.SourceLink}, 3)
	type want struct {
		key, why string
	}
	for _, tc := range []struct {
		found Found
		want  want
	}{
		{Found{Href: "next"}, want{"http://a.test/dir/next", ""}},
		{Found{Href: "/dir/next#frag"}, want{"http://a.test/dir/next", FoundAgain}},
		{Found{Href: "mailto:x@a.test"}, want{"", FoundNotHTTP}},
		{Found{Href: "http://[::1"}, want{"", policy.RejectBadURL}},
		{Found{Href: "http://b.test/"}, want{"http://b.test/", policy.RejectScope}},
		{Found{Href: "/private", NoFollow: true}, want{"http://a.test/private", FoundNoFollow}},
		{Found{Href: "http://a.test:6379/"}, want{"http://a.test:6379/", policy.RejectPort}},
		{Found{Href: "/fresh", Published: time.Now().Add(-time.Hour)}, want{"http://a.test/fresh", ""}},
		{Found{Href: "/tuned", Tune: func(c *store.Candidate) { c.HintS = 3600 }}, want{"http://a.test/tuned", ""}},
		{Found{Href: "/one-too-many"}, want{"http://a.test/one-too-many", policy.RejectOutlinks}},
	} {
		c, why := d.Add(tc.found)
		if c.Key != tc.want.key || why != tc.want.why {
			t.Errorf("%q: key %q why %q, want %q %q", tc.found.Href, c.Key, why, tc.want.key, tc.want.why)
		}
	}
	if len(d.Cands) != 3 || d.Cands[1].Priority <= d.Cands[0].Priority || d.Cands[2].HintS != 3600 {
		t.Errorf("candidates %+v", d.Cands)
	}
	if d.Refused() != 4 || d.Rejected[policy.RejectBadURL] != 1 || d.Rejected[policy.RejectScope] != 1 || d.Rejected[policy.RejectPort] != 1 || d.Rejected[policy.RejectOutlinks] != 1 {
		t.Errorf("refused %d: %v", d.Refused(), d.Rejected)
	}
	// Past the crawl's depth, a redirect or sitemap entry is refused like a link.
	deep := Discover(c, ci, base, From{Depth: 4, Hops: 1, Source: crawl.SourceRedirect}, 0)
	if _, why := deep.Add(Found{Href: "/deep"}); why != policy.RejectDepth {
		t.Errorf("a found URL past the depth: %q", why)
	}
}

// With allow patterns, a found URL must match one, whatever found it; the deny list and scope
// still come first; without any, every URL in scope passes.
func TestAllowPatternsIncludeOnlyWhatTheyMatch(t *testing.T) {
	c := &policy.Crawls{Norm: urlnorm.New(urlnorm.Default())}
	ci := c.Compile("c", crawl.Spec{Seeds: []string{"http://a.test/"}, Scope: crawl.ScopeHost,
		AllowPatterns: []string{`^http://a\.test/(docs|blog)/`}, DenyPatterns: []string{`/docs/old/`}}.WithDefaults())
	for _, src := range []crawl.Source{crawl.SourceLink, crawl.SourceRedirect, crawl.SourceSitemap} {
		d := Discover(c, ci, nil, From{Depth: 1, Source: src}, 0)
		for href, want := range map[string]string{
			"http://a.test/docs/intro":   "",
			"http://a.test/blog/2026/x":  "",
			"http://a.test/shop/cart":    policy.RejectNotAllowed,
			"http://a.test/docs/old/v1":  policy.RejectDenied,
			"http://b.test/docs/intro":   policy.RejectScope,
			"http://a.test/about?docs/1": policy.RejectNotAllowed,
		} {
			if _, why := d.Add(Found{Href: href}); why != want {
				t.Errorf("%s found by %s: %q, want %q", href, src, why, want)
			}
		}
	}
	// A seed's redirect (depth 0) and sitemap files are taken in: the seed is crawled, and a
	// sitemap is read for the pages it lists, which the patterns judge.
	if _, why := Discover(c, ci, nil, From{Depth: 0, Hops: 1, Source: crawl.SourceRedirect}, 0).Add(Found{Href: "http://a.test/home"}); why != "" {
		t.Errorf("a seed's redirect: %q", why)
	}
	if _, why := Discover(c, ci, nil, From{Source: crawl.SourceSitemapFile}, 0).Add(Found{Href: "http://a.test/sitemap.xml"}); why != "" {
		t.Errorf("a sitemap file: %q", why)
	}
	open := c.Compile("o", crawl.Spec{Seeds: []string{"http://a.test/"}, Scope: crawl.ScopeHost}.WithDefaults())
	if _, why := Discover(c, open, nil, From{Depth: 1}, 0).Add(Found{Href: "http://a.test/shop/cart"}); why != "" {
		t.Errorf("without allow patterns: %q", why)
	}
}

// A page's requisites are not judged by scope, depth, allow patterns or trap rules — deny
// lists and ports still hold — and are capped per page, on at most so many hosts out of scope.
func TestRequisitesAreJudgedAsThePagesOwn(t *testing.T) {
	c := &policy.Crawls{Norm: urlnorm.New(urlnorm.Default()), Ports: []int{80, 443}}
	ci := c.Compile("c", crawl.Spec{Seeds: []string{"http://a.test/"}, Scope: crawl.ScopeHost, MaxDepth: 1,
		AllowPatterns: []string{`^http://a\.test/only$`}, DenyHosts: []string{"evil.test"}}.WithDefaults())
	base, _ := url.Parse("http://a.test/page")
	d := Discover(c, ci, base, From{Depth: 5, Source: crawl.SourceEmbed}, 3)
	for href, want := range map[string]string{
		"/style.css": "", "http://cdn.test/lib.js": "", "http://evil.test/x.png": policy.RejectDenied,
		"http://cdn.test:6379/x.png": policy.RejectPort,
	} {
		if _, why := d.Add(Found{Href: href}); why != want {
			t.Errorf("%s: %q, want %q", href, why, want)
		}
	}
	d.Add(Found{Href: "http://cdn2.test/a.png"})
	if _, why := d.Add(Found{Href: "http://cdn3.test/a.png"}); why != policy.RejectRequisites {
		t.Errorf("past the per-page cap: %q", why)
	}
	d.LimitForeignHosts(1)
	var keys []string
	for _, c := range d.Cands {
		keys = append(keys, c.Key)
	}
	sort.Strings(keys) // (added from a map: in no order)
	if len(keys) != 2 || keys[0] != "http://a.test/style.css" || keys[1] != "http://cdn.test/lib.js" || d.Rejected[policy.RejectReqHosts] != 1 {
		t.Errorf("one foreign host: %v, %v", keys, d.Rejected)
	}
}
