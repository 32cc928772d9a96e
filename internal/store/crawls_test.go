package store_test

import (
	"slices"
	"testing"

	"github.com/trawlerdev/trawler/internal/crawl"
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
	got, err := s.CreateCrawl(ctx, "c", first)
	if err != nil || !slices.Equal(got.Seeds, first.Seeds) || got.MaxPages != 9 || got.Delay != first.Delay {
		t.Fatalf("created %+v, %v; want %+v", got, err, first)
	}
	again, err := s.CreateCrawl(ctx, "c", crawl.Spec{Seeds: []string{"http://b.test/"}, MaxPages: 1})
	if err != nil || !slices.Equal(again.Seeds, first.Seeds) || again.MaxPages != 9 {
		t.Errorf("a repeated start got %+v, %v; want the first record", again, err)
	}
}
