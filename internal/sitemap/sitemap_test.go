package sitemap

import (
	"bytes"
	"compress/gzip"
	"strings"
	"testing"
)

func TestURLSetAndIndex(t *testing.T) {
	sm, err := Parse([]byte(`<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<url><loc> http://x.test/a </loc><lastmod>2026-11-01T10:00:00Z</lastmod><changefreq>Daily</changefreq><priority>0.8</priority></url>
<url><loc>http://x.test/b</loc><lastmod>2026-11-02</lastmod></url>
<url><priority>0.1</priority></url>
</urlset>`))
	if err != nil || sm.Index || len(sm.Entries) != 2 {
		t.Fatalf("%+v %v", sm, err)
	}
	a := sm.Entries[0]
	if a.Loc != "http://x.test/a" || a.LastMod.Day() != 1 || a.ChangeFreq != "daily" || a.Priority != 0.8 || sm.Entries[1].Priority != -1 {
		t.Errorf("entry: %+v", a)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(`<sitemapindex><sitemap><loc>http://x.test/s1.xml.gz</loc></sitemap></sitemapindex>`))
	zw.Close()
	sm, err = Parse(gz.Bytes())
	if err != nil || !sm.Index || len(sm.Entries) != 1 || sm.Entries[0].Loc != "http://x.test/s1.xml.gz" {
		t.Fatalf("gzipped index: %+v %v", sm, err)
	}
}

func TestLimitsAndGarbage(t *testing.T) {
	var b strings.Builder
	b.WriteString("<urlset>")
	for i := 0; i < MaxEntries+10; i++ {
		b.WriteString("<url><loc>http://x.test/p</loc></url>")
	}
	b.WriteString("</urlset>")
	sm, err := Parse([]byte(b.String()))
	if err != nil || !sm.Truncated || len(sm.Entries) != MaxEntries {
		t.Errorf("over the entry limit: %d entries, truncated %v, %v", len(sm.Entries), sm != nil && sm.Truncated, err)
	}
	for _, bad := range []string{"", "not xml at all", "<html><body>hi</body></html>", "\x1f\x8bgarbage"} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
	if sm, err := Parse([]byte("<urlset><url><loc>http://x.test/a</loc></url><url><loc>http://x.test/b")); err != nil || len(sm.Entries) != 1 {
		t.Errorf("cut-off file: %+v %v", sm, err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`<urlset><url><loc>http://a/</loc><lastmod>2026-01-01</lastmod></url></urlset>`))
	f.Add([]byte(`<sitemapindex><sitemap><loc>http://a/s.xml</loc></sitemap></sitemapindex>`))
	f.Fuzz(func(t *testing.T, body []byte) {
		if sm, err := Parse(body); err == nil && len(sm.Entries) > MaxEntries {
			t.Fatal("entry limit exceeded")
		}
	})
}
