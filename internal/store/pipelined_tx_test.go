package store_test

import (
	"testing"

	"github.com/trawlerdev/trawler/internal/admit"
	"github.com/trawlerdev/trawler/internal/store"
)

// An admission whose transaction fails half-way (Postgres refuses a URL) leaves nothing
// behind, and the connection it used serves the next admission.
func TestAFailedAdmissionLeavesNothingAndTheNextWorks(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	good, bad := cand("http://a.test/ok", "a.test", 0), cand("http://a.test/bad", "a.test", 0)
	bad.URL = "http://a.test/\x00" // text Postgres cannot store
	for range 3 {                  // more than once: a connection left inside a transaction would show
		if _, err := s.Frontier().Admit(ctx, "c", []store.Candidate{good, bad}, admit.Budget(0), -1); err == nil {
			t.Fatal("admitting a URL Postgres cannot store succeeded")
		}
	}
	var n int
	if err := s.Pool().QueryRow(ctx, `SELECT count(*) FROM urls WHERE crawl_id = 'c'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d URLs after failed admissions (%v): want none", n, err)
	}
	res, err := s.Frontier().Admit(ctx, "c", []store.Candidate{good}, admit.Budget(0), -1)
	if err != nil || res.New["a.test"] != 1 {
		t.Fatalf("the next admission: %+v %v", res, err)
	}
	if p, err := s.Crawls().CrawlProgress(ctx, "c"); err != nil || p.Admitted != 1 {
		t.Fatalf("progress %+v %v: want 1 admitted", p, err)
	}
}
