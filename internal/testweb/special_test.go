package testweb

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/text/encoding/charmap"
)

func TestRobotsProfiles(t *testing.T) {
	cfg := fastConfig()
	_, c := serve(t, cfg)
	cases := []struct {
		host   string
		status int
		has    string
	}{
		{"h0000.test", 404, ""},
		{"h0001.test", 200, "Crawl-delay: 1"},
		{"h0002.test", 200, "Crawl-delay: 2"},
		{"h0003.test", 200, "Disallow: /private/"},
		{"h0004.test", 200, "User-agent: Trawlerbot"},
		{"h0005.test", 503, ""},
		{"h0006.test", 301, ""},
		{"h0007.test", 200, "Disallow: /beyond-the-limit/"},
		{"h0009.test", 200, "Disallow:\n"},
		{"sitemap.test", 200, "Sitemap: http://sitemap.test/sitemap_index.xml"},
	}
	for _, tc := range cases {
		r := get(t, c, "http://"+tc.host+"/robots.txt")
		if r.status != tc.status || !strings.Contains(string(r.body), tc.has) {
			t.Errorf("%s: %d %.80q", tc.host, r.status, r.body)
		}
	}
	if r := get(t, c, "http://h0006.test/robots.txt"); r.header.Get("Location") != "/robots-moved.txt" {
		t.Errorf("redirect profile: Location %q", r.header.Get("Location"))
	}
	if r := get(t, c, "http://h0006.test/robots-moved.txt"); r.status != 200 || !strings.Contains(string(r.body), "Disallow: /private/") {
		t.Errorf("moved robots: %d %q", r.status, r.body)
	}
	if r := get(t, c, "http://h0007.test/robots.txt"); len(r.body) <= 500<<10 {
		t.Errorf("oversized profile is only %d bytes", len(r.body))
	}
	start := time.Now()
	get(t, c, "http://h0008.test/robots.txt")
	if d := time.Since(start); d < cfg.SlowRobots {
		t.Errorf("slow profile answered in %v", d)
	}
}

func TestGenericPagesAreDeterministic(t *testing.T) {
	cfg := fastConfig()
	_, c1 := serve(t, cfg)
	_, c2 := serve(t, cfg)
	a, b := get(t, c1, "http://h0011.test/p/4.html"), get(t, c2, "http://h0011.test/p/4.html")
	if a.status != 200 || !bytes.Equal(a.body, b.body) || len(a.body) < 1500 || len(a.body) > 8000 {
		t.Fatalf("pages differ or are not a few KB: %d/%d bytes", len(a.body), len(b.body))
	}
	cfg.Seed = 2
	_, c3 := serve(t, cfg)
	if bytes.Equal(get(t, c3, "http://h0011.test/p/4.html").body, a.body) {
		t.Fatal("another seed gave the same page")
	}
	for _, p := range []string{"/p/9.html", "/p/99.html", "/o/3.html", "/x"} {
		if r := get(t, c1, "http://h0011.test"+p); r.status != 404 {
			t.Errorf("%s: %d, want 404", p, r.status)
		}
	}
	if r := get(t, c1, "http://h0011.test/o/9.html"); r.status != 200 {
		t.Errorf("orphan page: %d", r.status)
	}
}

func TestRedirectHost(t *testing.T) {
	_, c := serve(t, fastConfig())
	for from, to := range map[string]string{
		"/chain/3": "/chain/2", "/chain/1": "/chain/0", "/loop/a": "/loop/b", "/loop/b": "/loop/a",
		"/to-other": "http://h0049.test/",
	} {
		r := get(t, c, "http://redirect.test"+from)
		if r.status/100 != 3 || r.header.Get("Location") != to {
			t.Errorf("%s: %d -> %q, want -> %q", from, r.status, r.header.Get("Location"), to)
		}
	}
	if r := get(t, c, "http://redirect.test/to-loopback"); !strings.HasPrefix(r.header.Get("Location"), "http://127.0.0.1:") {
		t.Errorf("to-loopback: %q", r.header.Get("Location"))
	}
	if r := get(t, c, "http://redirect.test/chain/0"); r.status != 200 {
		t.Errorf("chain end: %d", r.status)
	}
}

func TestErrorAndTrapHosts(t *testing.T) {
	_, c := serve(t, fastConfig())
	for i := 0; i < 3; i++ {
		if r := get(t, c, "http://error.test/fail/2"); r.status != 500 {
			t.Fatalf("fail/2: %d", r.status)
		}
	}
	r := get(t, c, "http://trap.test/calendar/2026/12")
	if !strings.Contains(string(r.body), `href="/calendar/2027/1"`) || !strings.Contains(string(r.body), `href="/calendar/2026/11"`) {
		t.Errorf("calendar trap links: %s", r.body)
	}
	a := get(t, c, "http://trap.test/s/page?sid=1")
	time.Sleep(time.Millisecond)
	b := get(t, c, "http://trap.test/s/page?sid=1")
	if bytes.Equal(a.body, b.body) {
		t.Error("session trap does not mint new session ids")
	}
	if r := get(t, c, "http://trap.test/a/b/a/b/"); !strings.Contains(string(r.body), `href="/a/b/a/b/a/b/"`) {
		t.Errorf("repeating segments: %s", r.body)
	}
}

func TestHostileHost(t *testing.T) {
	_, c := serve(t, fastConfig())
	if r := get(t, c, "http://hostile.test/many-headers"); len(r.header) < 1000 {
		t.Errorf("many-headers: %d headers", len(r.header))
	}
	if r := get(t, c, "http://hostile.test/binary"); r.header.Get("Content-Type") != "text/html; charset=utf-8" || len(r.body) != 64<<10 {
		t.Errorf("binary: %q %d", r.header.Get("Content-Type"), len(r.body))
	}

	// /large streams 25 MB.
	resp, err := c.Get("http://hostile.test/large")
	if err != nil {
		t.Fatal(err)
	}
	n, _ := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if n != LargePageBytes {
		t.Errorf("large: %d bytes", n)
	}

	// /bomb: ~1 MB on the wire, 1 GiB once decompressed (we stop at 100 MB).
	resp, err = c.Get("http://hostile.test/bomb")
	if err != nil {
		t.Fatal(err)
	}
	wire, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.Header.Get("Content-Encoding") != "gzip" || len(wire) > 4<<20 {
		t.Fatalf("bomb: encoding %q, %d bytes on the wire", resp.Header.Get("Content-Encoding"), len(wire))
	}
	zr, err := gzip.NewReader(bytes.NewReader(wire))
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := io.Copy(io.Discard, io.LimitReader(zr, 100<<20)); n != 100<<20 {
		t.Errorf("bomb decompressed to only %d bytes", n)
	}

	// /reset cuts the body short.
	resp, err = c.Get("http://hostile.test/reset")
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	if err == nil {
		t.Error("reset: body read without error")
	}

	// /drip: a byte every 100 ms.
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://hostile.test/drip", nil)
	resp, err = c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !errors.Is(err, context.DeadlineExceeded) || len(got) > 40 {
		t.Errorf("drip: %d bytes in 500 ms, err %v", len(got), err)
	}
}

func TestContentHosts(t *testing.T) {
	_, c := serve(t, fastConfig())
	a1, a2 := get(t, c, "http://dup.test/exact/a1"), get(t, c, "http://dup.test/exact/a3")
	if !bytes.Equal(a1.body, a2.body) {
		t.Error("exact duplicates differ")
	}
	c1, c2 := get(t, c, "http://dup.test/near/c1"), get(t, c, "http://dup.test/near/c2")
	if bytes.Equal(c1.body, c2.body) || len(c1.body) < 2500 {
		t.Errorf("near duplicates: equal %v, %d bytes", bytes.Equal(c1.body, c2.body), len(c1.body))
	}
	if diff := wordDiff(string(c1.body), string(c2.body)); diff < 1 || diff > 8 {
		t.Errorf("near duplicates differ in %d words", diff)
	}

	idx := get(t, c, "http://sitemap.test/sitemap_index.xml")
	if !strings.Contains(string(idx.body), "sitemap-1.xml.gz") {
		t.Fatalf("sitemap index: %s", idx.body)
	}
	gz := get(t, c, "http://sitemap.test/sitemap-1.xml.gz")
	zr, err := gzip.NewReader(bytes.NewReader(gz.body))
	if err != nil {
		t.Fatal(err)
	}
	xml, _ := io.ReadAll(zr)
	if !strings.Contains(string(xml), "<loc>http://sitemap.test/only-in-sitemap/3</loc>") || !strings.Contains(string(xml), "<lastmod>") {
		t.Errorf("gzipped sitemap: %s", xml)
	}
	if r := get(t, c, "http://sitemap.test/only-in-sitemap/7"); r.status != 200 {
		t.Errorf("sitemap page: %d", r.status)
	}

	page := get(t, c, "http://variants.test/page").body
	for _, v := range []string{"/./page", "/x/../page", "/%70age", "/page?utm_source=feed"} {
		if r := get(t, c, "http://variants.test"+v); r.status != 200 || !bytes.Equal(r.body, page) {
			t.Errorf("variant %s: %d", v, r.status)
		}
	}
	if r := get(t, c, "http://variants.test/item?b=2&a=1"); r.status != 200 {
		t.Errorf("item variant: %d", r.status)
	}

	if r := get(t, c, "http://misc.test/base/"); !strings.Contains(string(r.body), `<base href="http://misc.test/based/">`) {
		t.Errorf("base page: %s", r.body)
	}
	if r := get(t, c, "http://misc.test/nofollow"); !strings.Contains(string(r.body), `rel="nofollow"`) {
		t.Error("nofollow page has no nofollow link")
	}
	if r := get(t, c, "http://misc.test/noindex"); !strings.Contains(string(r.body), `content="noindex, nofollow"`) {
		t.Error("noindex page has no meta robots")
	}
	if r := get(t, c, "http://misc.test/canonical-a"); !strings.Contains(string(r.body), `rel="canonical" href="http://misc.test/canonical-main"`) {
		t.Error("canonical missing")
	}
	l := get(t, c, "http://misc.test/latin1")
	if l.header.Get("Content-Type") != "text/html; charset=iso-8859-1" || bytes.Contains(l.body, []byte("café")) {
		t.Fatalf("latin1: %q, UTF-8 inside: %v", l.header.Get("Content-Type"), bytes.Contains(l.body, []byte("café")))
	}
	dec, _ := charmap.ISO8859_1.NewDecoder().Bytes(l.body)
	if !strings.Contains(string(dec), "café crème") {
		t.Error("latin1 page does not decode to its text")
	}
}

func wordDiff(a, b string) int {
	fa, fb := strings.Fields(a), strings.Fields(b)
	n := 0
	for i := 0; i < len(fa) && i < len(fb); i++ {
		if fa[i] != fb[i] {
			n++
		}
	}
	return n + max(len(fa), len(fb)) - min(len(fa), len(fb))
}
