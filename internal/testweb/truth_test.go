package testweb

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/temoto/robotstxt"
)

func TestTruthOnTinyGraphs(t *testing.T) {
	cfg := fastConfig()
	cfg.Specials = false
	cfg.Hosts, cfg.Pages = 1, 3
	web, _ := New(cfg)
	tr := web.Truth(web.Seeds())
	want := []string{"http://h0000.test/", "http://h0000.test/p/1.html", "http://h0000.test/p/2.html"}
	if !slices.Equal(tr.Pages, want) || len(tr.Disallowed)+len(tr.Dead)+len(tr.Redirects) != 0 {
		t.Fatalf("1 host × 3 pages: %+v", tr)
	}

	cfg.Hosts, cfg.Pages = 6, 4 // h0003 disallows /private/, h0005's robots.txt answers 503
	web, _ = New(cfg)
	tr = web.Truth(web.Seeds())
	for _, must := range []string{"http://h0003.test/private/3.html", "http://h0005.test/"} {
		if !slices.Contains(tr.Disallowed, must) {
			t.Errorf("%s is not disallowed: %v", must, tr.Disallowed)
		}
	}
	for _, u := range tr.Pages {
		if strings.HasPrefix(u, "http://h0005.test/") || u == "http://h0003.test/private/3.html" {
			t.Errorf("disallowed page in the truth: %s", u)
		}
	}
	for _, p := range []string{"/", "/p/1.html", "/p/2.html", "/private/3.html"} {
		if !slices.Contains(tr.Pages, "http://h0000.test"+p) {
			t.Errorf("h0000%s missing", p)
		}
	}
	if len(tr.Hosts) != 6 {
		t.Errorf("hosts: %v", tr.Hosts)
	}
}

// The truth must agree with what the web really serves: an independent reference crawl over
// HTTP (goquery for links, temoto/robotstxt for rules, sitemaps from robots.txt) finds the same
// pages, dead URLs, redirects and disallowed URLs.
func TestTruthMatchesAReferenceCrawl(t *testing.T) {
	cfg := fastConfig()
	cfg.Hosts, cfg.Pages = 30, 25
	srv, c := serve(t, cfg)
	tr := srv.Web.Truth(srv.Web.Seeds())
	ref := referenceCrawl(t, c, srv.Web.Seeds())

	wantPages := append(append([]string(nil), tr.Pages...), "http://misc.test/binary-html")
	sort.Strings(wantPages)
	for _, cmp := range []struct {
		name      string
		ref, want []string
	}{
		{"pages", ref.pages, wantPages},
		{"dead", ref.dead, tr.Dead},
		{"redirects", ref.redirects, tr.Redirects},
		{"disallowed", ref.disallowed, tr.Disallowed},
	} {
		if !slices.Equal(cmp.ref, cmp.want) {
			t.Errorf("%s: reference crawl found %d, truth says %d\nonly in reference: %v\nonly in truth: %v",
				cmp.name, len(cmp.ref), len(cmp.want), minus(cmp.ref, cmp.want), minus(cmp.want, cmp.ref))
		}
	}
	if len(tr.Pages) < 500 || len(tr.Clusters) != 4 {
		t.Errorf("truth has %d pages and %d clusters", len(tr.Pages), len(tr.Clusters))
	}
}

type refResult struct{ pages, dead, redirects, disallowed []string }

var locRe = regexp.MustCompile(`<loc>([^<]+)</loc>`)

func referenceCrawl(t *testing.T, c *http.Client, seeds []string) refResult {
	var res refResult
	robots := map[string]*robotstxt.RobotsData{}
	seen := map[string]bool{}
	hops := map[string]int{} // redirect hops that led to a URL
	var queue []string
	push := func(u string) {
		if u != "" && !seen[u] {
			seen[u] = true
			queue = append(queue, u)
		}
	}
	for _, s := range seeds {
		push(s)
	}
	for len(queue) > 0 {
		raw := queue[0]
		queue = queue[1:]
		u, _ := url.Parse(raw)
		host := u.Hostname()
		if host == "trap.test" || host == "hostile.test" || !strings.HasSuffix(host, ".test") {
			continue
		}
		rd, ok := robots[host]
		if !ok {
			r, err := c.Get("http://" + host + "/robots.txt")
			if err != nil {
				t.Fatal(err)
			}
			if loc := r.Header.Get("Location"); r.StatusCode/100 == 3 {
				r.Body.Close()
				if r, err = c.Get("http://" + host + loc); err != nil {
					t.Fatal(err)
				}
			}
			body, _ := io.ReadAll(r.Body)
			r.Body.Close()
			rd, _ = robotstxt.FromStatusAndBytes(r.StatusCode, body)
			robots[host] = rd
			for _, sm := range rd.Sitemaps {
				for _, loc := range sitemapLocs(t, c, sm) {
					push(loc)
				}
			}
		}
		if !rd.TestAgent(u.RequestURI(), "TrawlerBot") {
			res.disallowed = append(res.disallowed, raw)
			continue
		}
		r, err := c.Get(raw)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(r.Body)
		r.Body.Close()
		switch {
		case r.StatusCode/100 == 3:
			res.redirects = append(res.redirects, raw)
			// Never loopback, private or metadata; and at most MaxRedirectHops hops from a
			// URL that was not itself a redirect's target.
			if loc, err := u.Parse(r.Header.Get("Location")); err == nil && strings.HasSuffix(loc.Hostname(), ".test") && hops[raw] < MaxRedirectHops {
				target := canonicalURL(hostOnly(loc.Host), loc.EscapedPath(), loc.RawQuery)
				if !seen[target] {
					hops[target] = hops[raw] + 1
				}
				push(target)
			}
			continue
		case r.StatusCode >= 500 && r.StatusCode != 503:
			res.dead = append(res.dead, raw)
			continue
		case r.StatusCode == 429 || r.StatusCode == 503:
			res.pages = append(res.pages, raw) // served once the crawler has waited
			continue
		case r.StatusCode != 200:
			continue
		}
		res.pages = append(res.pages, raw)
		doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
		if err != nil {
			continue
		}
		if strings.Contains(strings.ToLower(doc.Find(`meta[name="robots"]`).AttrOr("content", "")), "nofollow") {
			continue
		}
		base := u
		if href, ok := doc.Find("base[href]").Attr("href"); ok {
			if b, err := u.Parse(href); err == nil {
				base = b
			}
		}
		doc.Find("a[href]").Each(func(_ int, a *goquery.Selection) {
			if strings.Contains(a.AttrOr("rel", ""), "nofollow") {
				return
			}
			l, err := base.Parse(a.AttrOr("href", ""))
			if err != nil || l.Scheme != "http" {
				return
			}
			push(canonicalURL(hostOnly(l.Host), l.EscapedPath(), l.RawQuery))
		})
	}
	for _, l := range [][]string{res.pages, res.dead, res.redirects, res.disallowed} {
		sort.Strings(l)
	}
	return res
}

func sitemapLocs(t *testing.T, c *http.Client, sm string) []string {
	r, err := c.Get(sm)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if strings.HasSuffix(sm, ".gz") {
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		body, _ = io.ReadAll(zr)
	}
	var out []string
	for _, m := range locRe.FindAllStringSubmatch(string(body), -1) {
		if strings.Contains(string(body), "<sitemapindex") {
			out = append(out, sitemapLocs(t, c, m[1])...)
		} else {
			out = append(out, m[1])
		}
	}
	return out
}

func minus(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	if len(out) > 10 {
		out = append(out[:10], "…")
	}
	return out
}

func TestCanonicalURL(t *testing.T) {
	for in, want := range map[[3]string]string{
		{"h.test", "/./a/../b/%7Ec", ""}:        "http://h.test/b/~c",
		{"h.test", "/a%2fb", "z=1&a=2"}:         "http://h.test/a%2Fb?a=2&z=1",
		{"h.test", "", "utm_source=x&id=3"}:     "http://h.test/?id=3",
		{"h.test", "/x/..", ""}:                 "http://h.test/",
		{"h.test", "/p/%31.html", "fbclid=abc"}: "http://h.test/p/1.html",
	} {
		if got := canonicalURL(in[0], in[1], in[2]); got != want {
			t.Errorf("canonicalURL%v = %q, want %q", in, got, want)
		}
	}
}

func TestRulesetMatching(t *testing.T) {
	rs := ruleset{rules: []rule{{false, "/private/"}, {true, "/private/open"}, {false, "/*.pdf$"}, {true, "/same"}, {false, "/same"}}}
	for path, want := range map[string]bool{
		"/": true, "/private/x": false, "/private/open/1": true, "/doc.pdf": false, "/doc.pdf?x": true,
		"/same": true, "/robots.txt": true,
	} {
		if got := rs.allowed(path); got != want {
			t.Errorf("allowed(%q) = %v, want %v", path, got, want)
		}
	}
	if (ruleset{disallowAll: true}).allowed("/") {
		t.Error("disallowAll allowed /")
	}
}
