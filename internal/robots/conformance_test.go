package robots

import (
	"strings"
	"testing"
	"time"

	"github.com/temoto/robotstxt"
)

// conformance cases derived from RFC 9309's MUSTs and SHOULDs. temotoGap marks the cases that
// temoto/robotstxt v1.1.2 alone gets wrong: the test also proves that it does, so each case
// would fail without the wrapper.
var conformance = []struct {
	section   string
	name      string
	body      string
	path      string
	allowed   bool
	temotoGap bool
}{
	// §2.1 / §2.2.1 groups and product tokens.
	{"2.2.1", "agent matched case-insensitively", "User-agent: trawlerBOT\nDisallow: /x", "/x", false, false},
	{"2.2.1", "our group wins over *", "User-agent: *\nDisallow: /\n\nUser-agent: TrawlerBot\nAllow: /", "/page", true, false},
	{"2.2.1", "a longer token is not ours (no prefix match)", "User-agent: TrawlerBotExtra\nDisallow: /\n", "/page", true, false},
	{"2.2.1", "a shorter token is not ours (no prefix match)", "User-agent: *\nAllow: /\n\nUser-agent: Trawler\nDisallow: /", "/page", true, true},
	{"2.2.1", "version suffix on the agent line", "User-agent: TrawlerBot/2.0\nDisallow: /v", "/v", false, true},
	{"2.2.1", "groups for the same token are merged", "User-agent: TrawlerBot\nDisallow: /foo\n\nUser-agent: other\nDisallow: /\n\nUser-agent: trawlerbot\nDisallow: /baz", "/baz", false, false},
	{"2.2.1", "several agent lines share a group", "User-agent: a\nUser-agent: TrawlerBot\nDisallow: /shared", "/shared", false, false},
	{"2.2.1", "no matching group: obey *", "User-agent: *\nDisallow: /foo\n\nUser-agent: BazBot\nDisallow: /baz", "/foo", false, false},
	{"2.2.1", "no matching group and no *: allowed", "User-agent: BazBot\nDisallow: /", "/x", true, false},
	{"2.2.4", "a sitemap line does not end the agent list", "User-agent: *\nSitemap: http://x/s.xml\nUser-agent: TrawlerBot\nDisallow: /s", "/s", false, false},
	// §2.2.2 allow and disallow.
	{"2.2.2", "longest match wins", "User-agent: *\nDisallow: /a\nAllow: /a/b", "/a/b/c", true, false},
	{"2.2.2", "longest match wins (disallow)", "User-agent: *\nAllow: /a\nDisallow: /a/b", "/a/b/c", false, false},
	{"2.2.2", "an allow wins a tie", "User-agent: *\nDisallow: /page\nAllow: /page", "/page", true, true},
	{"2.2.2", "matching is case sensitive", "User-agent: *\nDisallow: /Private", "/private", true, false},
	{"2.2.2", "matching starts at the first octet", "User-agent: *\nDisallow: /b", "/a/b", true, false},
	{"2.2.2", "no rules: allowed", "User-agent: *\n", "/x", true, false},
	{"2.2.2", "empty disallow allows", "User-agent: *\nDisallow:", "/x", true, false},
	{"2.2.2", "/robots.txt is implicitly allowed", "User-agent: *\nDisallow: /", "/robots.txt", true, true},
	{"2.2.2", "%7E in the URI equals ~ in the rule", "User-agent: *\nDisallow: /~user", "/%7Euser/page", false, true},
	{"2.2.2", "%62%61%7A is baz", "User-agent: *\nDisallow: /foo/bar/baz", "/foo/bar/%62%61%7A", false, true},
	{"2.2.2", "reserved %2F stays encoded", "User-agent: *\nDisallow: /a/b", "/a%2Fb", true, false},
	{"2.2.2", "UTF-8 rule matches its encoding", "User-agent: *\nDisallow: /foo/bar/ツ", "/foo/bar/%E3%83%84", false, true},
	{"2.2.2", "hex case does not matter", "User-agent: *\nDisallow: /a%2fb", "/a%2Fb", false, true},
	{"2.2.2", "the query is part of the path", "User-agent: *\nDisallow: /search?q=", "/search?q=cats", false, false},
	{"2.2.2", "rules before any user-agent are ignored", "Disallow: /x\nUser-agent: *\nDisallow: /y", "/x", true, true},
	// §2.2.3 special characters.
	{"2.2.3", "* matches any run", "User-agent: *\nDisallow: /a/*/c", "/a/b/b/c", false, false},
	{"2.2.3", "$ anchors the end", "User-agent: *\nDisallow: /*.pdf$", "/doc.pdf", false, false},
	{"2.2.3", "$ does not match a longer path", "User-agent: *\nDisallow: /*.pdf$", "/doc.pdf?x=1", true, false},
	{"2.2.3", "# starts a comment", "User-agent: * # all\nDisallow: /x # not /y", "/x", false, false},
	{"2.2.3", "%2A matches a literal *", "User-agent: *\nDisallow: /file-%2A.html", "/file-*.html", false, true},
	{"2.2.3", "wildcard allow wins by pattern length", "User-agent: *\nDisallow: /*.html\nAllow: /a*.html", "/abc.html", true, false},
	{"2.2.3", "precedence counts pattern octets, not regexp length", "User-agent: *\nDisallow: /shop/xyz\nAllow: /*.g.i.f", "/shop/xyz.g.i.f", false, true},
	{"2.2.3", "wildcard tie goes to allow", "User-agent: *\nDisallow: /*a\nAllow: /a*", "/aa", true, true},
	// §2.3.1.5 parsing errors: use every parseable line.
	{"2.3.1.5", "a bad crawl-delay does not void the file", "User-agent: *\nCrawl-delay: 1s\nDisallow: /x", "/x", false, true},
	{"2.3.1.5", "a line without a colon is skipped", "User-agent: *\nthis is junk\nDisallow: /x", "/x", false, false},
	{"2.3.1.5", "unknown records are skipped", "User-agent: *\nNoindex: /y\nDisallow: /x", "/x", false, false},
	{"2.3.1.5", "a UTF-8 BOM is skipped", "\xef\xbb\xbfUser-agent: *\nDisallow: /x", "/x", false, false},
	{"2.3.1.5", "CR line endings", "User-agent: *\rDisallow: /x\r", "/x", false, false},
	{"2.3.1.5", "CRLF line endings", "User-agent: *\r\nDisallow: /x\r\nAllow: /x/y\r\n", "/x/z", false, false},
}

func TestConformance(t *testing.T) {
	for _, c := range conformance {
		r := FromStatus(200, []byte(c.body), "TrawlerBot")
		if got := r.Allowed(c.path); got != c.allowed {
			t.Errorf("§%s %s: Allowed(%q) = %v, want %v", c.section, c.name, c.path, got, c.allowed)
		}
		data, err := robotstxt.FromString(c.body)
		temotoRight := err == nil && data.TestAgent(c.path, "TrawlerBot") == c.allowed
		if c.temotoGap && temotoRight {
			t.Errorf("§%s %s: marked as a temoto gap, but temoto alone gets it right", c.section, c.name)
		}
		if !c.temotoGap && !temotoRight {
			t.Logf("§%s %s: temoto alone gets this wrong too (err %v)", c.section, c.name, err)
		}
	}
}

func TestAccessResults(t *testing.T) {
	body := []byte("User-agent: *\nDisallow: /x\n")
	for _, c := range []struct {
		section string
		status  int
		path    string
		allowed bool
	}{
		{"2.3.1.1", 200, "/x", false}, {"2.3.1.1", 200, "/y", true},
		{"2.3.1.3", 404, "/x", true}, {"2.3.1.3", 403, "/x", true}, {"2.3.1.3", 410, "/x", true},
		{"2.3.1.4", 500, "/y", false}, {"2.3.1.4", 503, "/y", false}, {"2.3.1.4", 429, "/y", false},
		{"2.3.1.4", 0, "/y", false}, // network error
		{"2.3.1.4", 503, "/robots.txt", true},
	} {
		if got := FromStatus(c.status, body, "TrawlerBot").Allowed(c.path); got != c.allowed {
			t.Errorf("§%s status %d: Allowed(%q) = %v, want %v", c.section, c.status, c.path, got, c.allowed)
		}
	}
}

func TestCrawlDelayAndSitemaps(t *testing.T) {
	r := FromStatus(200, []byte("Sitemap: http://x/a.xml\nUser-agent: *\nCrawl-delay: 0.5\nsitemap: http://x/b.xml.gz\n"), "TrawlerBot")
	if r.CrawlDelay != 500*time.Millisecond || len(r.Sitemaps) != 2 {
		t.Errorf("delay %v sitemaps %v", r.CrawlDelay, r.Sitemaps)
	}
	r = FromStatus(200, []byte("User-agent: TrawlerBot\nCrawl-delay: 3\n\nUser-agent: trawlerbot\nCrawl-delay: 7\n"), "TrawlerBot")
	if r.CrawlDelay != 7*time.Second {
		t.Errorf("merged groups keep the longest delay: %v", r.CrawlDelay)
	}
	for _, bad := range []string{"-1", "NaN", "inf", "soon", "1e9"} {
		if r := FromStatus(200, []byte("User-agent: *\nCrawl-delay: "+bad+"\n"), "TrawlerBot"); r.CrawlDelay != 0 || r.Invalid != 1 {
			t.Errorf("crawl-delay %q: %v, %d invalid", bad, r.CrawlDelay, r.Invalid)
		}
	}
}

func FuzzRobots(f *testing.F) {
	for _, c := range conformance {
		f.Add(c.body, c.path)
	}
	f.Add(strings.Repeat("User-agent: *\nDisallow: /*a*b*c*d$\n", 50), "/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab")
	f.Add("# caf\xe9\x00\nUser-agent: *\nDisallow: /caf\xe9\nSitemap: http://a/\xff\n", "/caf%E9")
	f.Fuzz(func(t *testing.T, body, path string) {
		start := time.Now()
		r := FromStatus(200, []byte(body), "TrawlerBot")
		_ = r.Allowed(path)
		if !r.Allowed("/robots.txt") {
			t.Fatal("/robots.txt disallowed")
		}
		if d := time.Since(start); d > 250*time.Millisecond+time.Duration(len(body)+len(path))*time.Microsecond {
			t.Fatalf("%d bytes took %v", len(body)+len(path), d)
		}
	})
}
