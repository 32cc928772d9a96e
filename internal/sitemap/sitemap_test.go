package sitemap

import (
	"bytes"
	"compress/gzip"
	"strings"
	"testing"
	"time"
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
	f.Add([]byte(`<urlset><url><loc>http://a/<!--x-->b&amp;c<![CDATA[d]]></loc></url></urlset>`))
	f.Fuzz(func(t *testing.T, body []byte) {
		start := time.Now()
		sm, err := Parse(body)
		// Linear: 250 ms (room for a GC pause on a busy machine) plus 1 µs a byte — 100 ms per 100 KB.
		if d, bound := time.Since(start), 250*time.Millisecond+time.Duration(len(body))*time.Microsecond; d > bound {
			t.Fatalf("%d bytes took %v (bound %v)", len(body), d, bound)
		}
		if err != nil {
			return
		}
		if len(sm.Entries) > MaxEntries {
			t.Fatal("entry limit exceeded")
		}
		for _, e := range sm.Entries {
			if len(e.Loc) > MaxLocBytes {
				t.Fatalf("a <loc> of %d bytes kept", len(e.Loc))
			}
		}
	})
}

// A <loc> in very many pieces (here a comment between every character) is read in linear
// time: building it by concatenation took 5 s for 100,000 pieces.
func TestLocInManyPiecesIsLinear(t *testing.T) {
	var b strings.Builder
	b.WriteString("<urlset><url><loc>http://a.test/")
	for i := 0; i < 1000; i++ {
		b.WriteString("x<!---->")
	}
	b.WriteString("</loc></url><url><loc>http://a.test/")
	for i := 0; i < 200_000; i++ {
		b.WriteString("y<!---->")
	}
	b.WriteString("</loc></url><url><loc>http://a.test/ok</loc></url></urlset>")
	start := time.Now()
	sm, err := Parse([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("%d bytes in 200,000 pieces took %v", b.Len(), d)
	}
	if len(sm.Entries) != 2 || sm.Entries[0].Loc != "http://a.test/"+strings.Repeat("x", 1000) || sm.Entries[1].Loc != "http://a.test/ok" {
		t.Errorf("entries: %d (the over-long <loc> must be dropped, the others kept)", len(sm.Entries))
	}
}
