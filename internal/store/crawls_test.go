package store_test

import (
	"slices"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/pacing"
	"github.com/trawlerdev/trawler/internal/store"
	"github.com/trawlerdev/trawler/internal/testenv"
)

// Creating a crawl returns its spec as recorded, in the same step: the new one, or on a
// repeated start the first record, whatever the repeat carries.
func TestCreateCrawlReturnsTheRecord(t *testing.T) {
	pool, _ := testenv.Postgres(t)
	s := store.New(pool)
	ctx := t.Context()
	first := crawl.Spec{Seeds: []string{"http://a.test/"}, MaxPages: 9}.WithDefaults()
	got, err := s.Crawls().CreateCrawl(ctx, "c", first)
	if err != nil || !slices.Equal(got.Seeds, first.Seeds) || got.MaxPages != 9 || got.Delay != first.Delay {
		t.Fatalf("created %+v, %v; want %+v", got, err, first)
	}
	again, err := s.Crawls().CreateCrawl(ctx, "c", crawl.Spec{Seeds: []string{"http://b.test/"}, MaxPages: 1})
	if err != nil || !slices.Equal(again.Seeds, first.Seeds) || again.MaxPages != 9 {
		t.Errorf("a repeated start got %+v, %v; want the first record", again, err)
	}
}

// A crawl's throttle goes into its recorded spec, where every worker's crawl rules read it:
// throttles add up (a delay, then a concurrency) and a reset removes them.
func TestThrottleCrawlEditsTheSpec(t *testing.T) {
	pool, _ := testenv.Postgres(t)
	s := store.New(pool)
	ctx := t.Context()
	if _, err := s.Crawls().CreateCrawl(ctx, "c", crawl.Spec{Seeds: []string{"http://a.test/"}}.WithDefaults()); err != nil {
		t.Fatal(err)
	}
	read := func() crawl.Spec {
		t.Helper()
		var spec crawl.Spec
		if err := s.Crawls().CrawlSpec(ctx, "c", &spec); err != nil {
			t.Fatal(err)
		}
		return spec
	}
	if err := s.Crawls().ThrottleCrawl(ctx, "c", 5*time.Second, 0, false); err != nil {
		t.Fatal(err)
	}
	if err := s.Crawls().ThrottleCrawl(ctx, "c", 0, 1, false); err != nil {
		t.Fatal(err)
	}
	if p := pacing.OfCrawl(read()); p.Delay != 5*time.Second || p.Concurrency != 1 {
		t.Errorf("throttled pacing %+v, want 5s and 1", p)
	}
	if err := s.Crawls().ThrottleCrawl(ctx, "c", 0, 0, true); err != nil {
		t.Fatal(err)
	}
	if spec := read(); spec.Throttle != nil || spec.Delay.D() != time.Second {
		t.Errorf("after the reset: %+v, delay %v", spec.Throttle, spec.Delay)
	}
}
