package store_test

import (
	"crypto/sha256"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/trawlerdev/trawler/internal/admit"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/dedup"
	"github.com/trawlerdev/trawler/internal/store"
)

func TestTextIsStorable(t *testing.T) {
	for _, in := range []string{"caf\xe9", "a\x00b", "\xff\xfe", "ok", "日本"} {
		out := store.Text(in)
		if !utf8.ValidString(out) || strings.ContainsRune(out, 0) {
			t.Errorf("Text(%q) = %q: not storable", in, out)
		}
	}
	if store.Text("日本 ok") != "日本 ok" {
		t.Error("valid text changed")
	}
}

// What the web sends — a Latin-1 robots.txt, header values with bytes >= 0x80, NULs, a
// non-UTF-8 <html lang> — is stored (bytes exactly where exactness matters) instead of failing
// the write (SQLSTATE 22021), which failed the whole batch on every retry.
func TestWebBytesAreStored(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	body := "# caf\xe9 \x00\nUser-agent: *\nDisallow: /caf\xe9\n"
	if err := s.Hosts().SaveRobots(ctx, "a.test", "http", store.Robots{Status: 200, Body: body, FetchedAt: time.Now(),
		ExpiresAt: time.Now().Add(time.Hour), Sitemaps: []string{"http://a.test/s\xe9.xml"}}, 0); err != nil {
		t.Fatalf("Latin-1 robots.txt: %v", err)
	}
	r, err := s.Hosts().HostRobots(ctx, "a.test", "http")
	if err != nil || r == nil || r.Body != body {
		t.Fatalf("robots.txt not kept byte for byte: %+v %v", r, err)
	}
	a := cand("http://a.test/1", "a.test", 0)
	if _, err := s.Frontier().Admit(ctx, "c", []store.Candidate{a}, admit.Budget(0), -1); err != nil {
		t.Fatal(err)
	}
	head := "HTTP/1.1 200 OK\r\nX-Name: Jos\xe9\r\nETag: \"\xff\"\r\n\r\n"
	content := sha256.Sum256([]byte("page"))
	if _, err := s.Fetches().RecordFetch(ctx, "a.test", store.FetchOutcome{CrawlID: "c", Hash: a.Hash, URL: a.URL, FetchKey: "k1",
		FetchedAt: time.Now(), Status: 200, ContentType: "text/html; charset=\xe9\x00", ETag: "\"\xff\"", LastModified: "\xfe",
		ContentHash: content[:], BodyKey: "bodies/x", Bytes: 4, RequestHead: "GET / HTTP/1.1\r\n\r\n", ResponseHead: head,
		Err: "", Note: "\x00", State: crawl.URLFetched}); err != nil {
		t.Fatalf("header bytes >= 0x80: %v", err)
	}
	var stored []byte
	if err := s.Pool().QueryRow(ctx, `SELECT response_head FROM fetches WHERE fetch_key = 'k1'`).Scan(&stored); err != nil || string(stored) != head {
		t.Fatalf("response head not kept byte for byte: %q %v", stored, err)
	}
	if _, err := s.Documents().SaveDocument(ctx, store.Document{CrawlID: "c", Hash: a.Hash, ContentHash: content[:], BodyKey: "bodies/x",
		Title: "T\xe9\x00", Lang: "\xff", Charset: "latin1\x00", ContentType: "text/html", Size: 4}, nil, nil); err != nil {
		t.Fatalf("non-UTF-8 lang and title: %v", err)
	}
	if !store.IsDataError(s.Pool().QueryRow(ctx, `SELECT convert_from('\xff'::bytea, 'UTF8')`).Scan(new(string))) {
		t.Error("IsDataError does not recognise an encoding error")
	}
}

// The first save decides: A, B (a duplicate of A), A again must leave A the original and B
// its duplicate — never each a duplicate of the other — for exact and near duplicates alike.
func TestDuplicateVerdictsAreStableUnderResaves(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	det, _ := dedup.NewDetector(3, 0.9)
	docs := dedup.GenerateCorpus(11, 60)
	near := -1
	for i := 1; i < len(docs); i++ {
		if docs[i].Cluster == docs[0].Cluster {
			near = i
			break
		}
	}
	if near < 0 {
		t.Fatal("the corpus has no near-duplicate of its first document")
	}
	for _, tc := range []struct{ name, a, b string }{
		{"exact", "same words in the same order for both pages here", "same words in the same order for both pages here"},
		{"near", docs[0].Text, docs[near].Text},
	} {
		ua, ub := "http://a.test/"+tc.name+"/a", "http://a.test/"+tc.name+"/b"
		if dup := saveText(t, ctx, s, det, ua, tc.a); dup != nil {
			t.Fatalf("%s: the first document is a duplicate", tc.name)
		}
		if dup := saveText(t, ctx, s, det, ub, tc.b); dup == nil {
			t.Fatalf("%s: the second document is no duplicate", tc.name)
		}
		if dup := saveText(t, ctx, s, det, ua, tc.a); dup != nil {
			t.Errorf("%s: saved again, the original became a duplicate of %x", tc.name, dup.Of)
		}
		var mutual int
		_ = s.Pool().QueryRow(ctx, `SELECT count(*) FROM documents x JOIN documents y ON x.dup_of = y.url_hash AND y.dup_of = x.url_hash`).Scan(&mutual)
		if mutual != 0 {
			t.Errorf("%s: %d documents are duplicates of each other", tc.name, mutual)
		}
	}
}
