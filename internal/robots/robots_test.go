package robots

import (
	"strings"
	"testing"
	"time"
)

func TestStatusSemantics(t *testing.T) {
	body := []byte("User-agent: *\nDisallow: /private/\nCrawl-delay: 2\nSitemap: http://x.test/s.xml\n")
	r := FromStatus(200, body, "TrawlerBot")
	if r.Allowed("/private/a") || !r.Allowed("/public") || r.CrawlDelay.Seconds() != 2 || len(r.Sitemaps) != 1 {
		t.Errorf("200: %+v", r)
	}
	for _, s := range []int{404, 410, 401, 403} {
		if !FromStatus(s, nil, "TrawlerBot").Allowed("/anything") {
			t.Errorf("%d must allow everything", s)
		}
	}
	for _, s := range []int{500, 503, 429, 0} {
		r := FromStatus(s, nil, "TrawlerBot")
		if r.Allowed("/anything") || !r.Allowed("/robots.txt") || !r.DisallowAll() {
			t.Errorf("%d must disallow everything but robots.txt", s)
		}
	}
}

func TestProductTokenGroup(t *testing.T) {
	body := []byte("User-agent: *\nDisallow: /\n\nUser-agent: Trawlerbot\nDisallow: /p/2\nAllow: /\n")
	r := FromStatus(200, body, ProductToken("TrawlerBot/0.1 (+https://example.com/bot)"))
	if !r.Allowed("/p/1.html") || r.Allowed("/p/21.html") {
		t.Error("our group was not applied")
	}
	if FromStatus(200, body, "OtherBot").Allowed("/p/1.html") {
		t.Error("another agent got our group")
	}
}

func TestOversizedIsCut(t *testing.T) {
	var b strings.Builder
	b.WriteString("User-agent: *\nDisallow: /a/\n")
	for b.Len() < MaxBytes+1000 {
		b.WriteString("# pad\n")
	}
	b.WriteString("Disallow: /b/\n")
	r := FromStatus(200, []byte(b.String()), "TrawlerBot")
	if r.Allowed("/a/x") || !r.Allowed("/b/x") {
		t.Error("rules past 500 KiB must be ignored, those before applied")
	}
}

func TestProductToken(t *testing.T) {
	for in, want := range map[string]string{"TrawlerBot/0.1 (+x)": "TrawlerBot", "Simple": "Simple", " Bot (x)": "Bot"} {
		if got := ProductToken(in); got != want {
			t.Errorf("ProductToken(%q) = %q", in, got)
		}
	}
}

func TestKeepCachedWhileUnreachable(t *testing.T) {
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	for _, c := range []struct {
		cached int
		age    time.Duration
		fresh  int
		keep   bool
	}{
		{200, day, 503, true}, {404, 10 * day, 0, true}, {200, 29 * day, 429, true},
		{200, 31 * day, 503, false},                    // too old: complete disallow
		{503, day, 503, false},                         // no good copy
		{200, day, 200, false}, {200, day, 404, false}, // a real answer replaces the copy
	} {
		if got := KeepCached(c.cached, now.Add(-c.age), c.fresh, now); got != c.keep {
			t.Errorf("cached %d (%v old), fresh %d: keep = %v", c.cached, c.age, c.fresh, got)
		}
	}
}

func TestExplainNamesTheDecisiveRule(t *testing.T) {
	r := FromStatus(200, []byte("User-agent: *\nDisallow: /private/\nAllow: /private/open\n"), "trawlerbot")
	for path, want := range map[string]string{
		"/private/x":    "Disallow: /private/",
		"/private/open": "Allow: /private/open",
		"/public":       "no rule matches",
	} {
		allowed, why := r.Explain(path)
		if why != want || allowed != r.Allowed(path) {
			t.Errorf("Explain(%q) = %v %q, want %q", path, allowed, why, want)
		}
	}
	if _, why := FromStatus(404, nil, "x").Explain("/a"); why != "no robots.txt" {
		t.Errorf("404: %q", why)
	}
}

// BenchmarkParseOversized parses a file as big as the cap, of short comment lines, the shape
// some sites serve.
func BenchmarkParseOversized(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("User-agent: *\nDisallow: /private/\n")
	for sb.Len() < MaxBytes {
		sb.WriteString("# padding padding padding padding padding padding padding padding padding\r\n")
	}
	body := []byte(sb.String())
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if f := parseFile(body); len(f.groups) != 1 {
			b.Fatalf("%d groups", len(f.groups))
		}
	}
}
