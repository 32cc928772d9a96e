package scope

import (
	"testing"

	"github.com/trawlerdev/trawler/internal/crawl"
)

func TestScopes(t *testing.T) {
	seeds := []string{"www.example.co.uk", "h0001.test:8080"}
	cases := []struct {
		scope string
		allow []string
		host  string
		want  bool
	}{
		{crawl.ScopeHost, nil, "www.example.co.uk", true},
		{crawl.ScopeHost, nil, "shop.example.co.uk", false},
		{crawl.ScopeHost, nil, "h0001.test:9090", true},
		{crawl.ScopeDomain, nil, "shop.example.co.uk", true},
		{crawl.ScopeDomain, nil, "example.co.uk", true},
		{crawl.ScopeDomain, nil, "other.co.uk", false},
		{crawl.ScopeDomain, nil, "notexample.co.uk", false},
		{crawl.ScopeList, []string{"golang.org", "*.go.dev"}, "pkg.go.dev", true},
		{crawl.ScopeList, []string{"golang.org"}, "golang.org", true},
		{crawl.ScopeList, []string{"golang.org"}, "xgolang.org", false},
		{crawl.ScopeAny, nil, "anything.example", true},
	}
	for _, tc := range cases {
		s := New(crawl.Spec{Scope: tc.scope, AllowDomains: tc.allow}, seeds)
		if got := s.Allows(tc.host); got != tc.want {
			t.Errorf("%s %v: Allows(%q) = %v", tc.scope, tc.allow, tc.host, got)
		}
	}
	if Registrable("10.0.0.1") != "10.0.0.1" || Registrable("a.b.github.io") != "b.github.io" {
		t.Error("registrable domain")
	}
}

func TestDenyLists(t *testing.T) {
	s := New(crawl.Spec{Scope: crawl.ScopeAny, DenyHosts: []string{"ads.example", "*.tracker.test"},
		DenyPatterns: []string{`/logout`, `\.(zip|exe)$`}}, nil)
	for host, want := range map[string]bool{"ads.example": false, "x.ads.example": false, "tracker.test": false,
		"a.tracker.test": false, "example": true, "notads.example": true} {
		if got := s.Allows(host); got != want {
			t.Errorf("Allows(%q) = %v", host, got)
		}
	}
	for u, want := range map[string]bool{"http://a.test/logout?x": true, "http://a.test/f.zip": true, "http://a.test/zip": false} {
		if got := s.DeniesURL(u); got != want {
			t.Errorf("DeniesURL(%q) = %v", u, got)
		}
	}
	if err := (crawl.Spec{Seeds: []string{"http://a/"}, DenyPatterns: []string{"("}}).WithDefaults().Validate(); err == nil {
		t.Error("a bad deny pattern was accepted")
	}
}
