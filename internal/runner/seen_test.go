package runner

import (
	"context"
	"log/slog"
	"testing"

	"github.com/trawlerdev/trawler/internal/admit"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/seen"
	"github.com/trawlerdev/trawler/internal/store"
	"github.com/trawlerdev/trawler/internal/testenv"
	"github.com/trawlerdev/trawler/internal/urlnorm"
)

func TestWarmSeenFromPostgresThenFromSnapshot(t *testing.T) {
	pool, _ := testenv.Postgres(t)
	st := store.New(pool)
	blobs := testenv.Blob(t)
	ctx := context.Background()
	if _, err := st.Crawls().CreateCrawl(ctx, "c", crawl.Spec{}); err != nil {
		t.Fatal(err)
	}
	u := "http://a.test/x"
	if _, err := st.Frontier().Admit(ctx, "c", []store.Candidate{{URL: u, Hash: urlnorm.Hash(u), Host: "a.test", Source: "seed"}}, admit.Budget(0), -1); err != nil {
		t.Fatal(err)
	}
	for _, step := range []string{"postgres", "snapshot"} {
		f := seen.New(1000, 1e-6, true)
		warmSeen(ctx, f, st, blobs, 1000, slog.Default())
		if !f.Skip("c", urlnorm.Hash(u)) {
			t.Fatalf("after warming from %s the filter does not know the admitted URL", step)
		}
		if f.Skip("c", urlnorm.Hash("http://a.test/new")) {
			t.Fatalf("after warming from %s the filter knows a new URL", step)
		}
		if ok, _ := blobs.Exists(ctx, "seen/bloom-1000.bin"); !ok {
			t.Fatal("no snapshot written")
		}
	}
}
