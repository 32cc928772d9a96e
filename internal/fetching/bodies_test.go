package fetching

import (
	"crypto/sha256"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/store"
)

func bodyOfPath(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html")
	_, _ = w.Write([]byte("<p>body of " + r.URL.Path + "</p>"))
}

// A crawl deduplicating against an earlier one stores no body whose digest it finds: the
// fetch points at the stored bytes. Only the bodies found nowhere are stored.
func TestABodyAlreadyStoredIsNotStoredAgain(t *testing.T) {
	f := newFixture(t, bodyOfPath, pages(3)...)
	old := sha256.Sum256([]byte("<p>body of /p1</p>"))
	f.st.payloads = map[string]store.Payload{string(old[:]): {BodyKey: "segments/bodies/old/x.gz#0+20", OwnerCrawl: "old"}}
	f.tune = func(s *crawl.Spec) { s.DedupAgainst = []string{"old"} }
	f.lease(t, 10*time.Millisecond, LeaseBeat{}, 1)

	if o, _ := f.st.outcome("http://site.test/p1"); o.BodyKey != "segments/bodies/old/x.gz#0+20" || string(o.ContentHash) != string(old[:]) {
		t.Errorf("p1 points at %q (digest %x); want the earlier crawl's body", o.BodyKey, o.ContentHash)
	}
	for _, u := range []string{"http://site.test/p0", "http://site.test/p2"} {
		if o, _ := f.st.outcome(u); f.bodies[o.BodyKey] == "" {
			t.Errorf("%s: body %q not stored", u, o.BodyKey)
		}
	}
	if len(f.bodies) != 2 {
		t.Errorf("%d bodies stored; want 2 (p1's digest was stored)", len(f.bodies))
	}
	if len(f.st.asked) != 3 || !slices.Equal(f.st.asked[0], []string{"old"}) {
		t.Errorf("payload lookups %v; want one per body, in [old]", f.st.asked)
	}
}

// An unchanged recrawl points at the URL's last body without a lookup; a changed one stores.
func TestAnUnchangedRecrawlKeepsItsBody(t *testing.T) {
	f := newFixture(t, bodyOfPath)
	same := sha256.Sum256([]byte("<p>body of /same</p>"))
	f.st.queue = append(f.st.queue,
		crawl.Claimed{CrawlID: "c", Hash: []byte("http://site.test/same"), URL: "http://site.test/same", FetchCount: 1, ContentHash: same[:], BodyKey: "prev#0+9"},
		crawl.Claimed{CrawlID: "c", Hash: []byte("http://site.test/new"), URL: "http://site.test/new", FetchCount: 1, ContentHash: same[:], BodyKey: "prev#0+9"})
	f.st.states["http://site.test/same"], f.st.states["http://site.test/new"] = crawl.URLQueued, crawl.URLQueued
	f.lease(t, 10*time.Millisecond, LeaseBeat{}, 1)

	if o, _ := f.st.outcome("http://site.test/same"); o.BodyKey != "prev#0+9" {
		t.Errorf("the unchanged page points at %q; want its last body", o.BodyKey)
	}
	if o, _ := f.st.outcome("http://site.test/new"); o.BodyKey == "prev#0+9" || f.bodies[o.BodyKey] != "<p>body of /new</p>" {
		t.Errorf("the changed page points at %q; want its new body stored", o.BodyKey)
	}
	if len(f.st.asked) != 0 {
		t.Errorf("%d payload lookups in a crawl without dedupAgainst", len(f.st.asked))
	}
}
