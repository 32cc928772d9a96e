package seen_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/trawlerdev/trawler/internal/admit"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/seen"
	"github.com/trawlerdev/trawler/internal/store"
	"github.com/trawlerdev/trawler/internal/testenv"
)

// seedFrontier fills a fresh database with n URLs of one crawl and returns the store and hashes.
func seedFrontier(b *testing.B, n int) (*store.Store, [][]byte) {
	b.Helper()
	pool, _ := testenv.Postgres(b)
	s := store.New(pool)
	ctx := context.Background()
	if _, err := s.Crawls().CreateCrawl(ctx, "bench", crawl.Spec{Seeds: []string{"http://x/"}}); err != nil {
		b.Fatal(err)
	}
	hashes := make([][]byte, n)
	rows := make([][]any, n)
	for i := range hashes {
		h := make([]byte, 16)
		_, _ = rand.Read(h)
		hashes[i] = h
		rows[i] = []any{"bench", h, fmt.Sprintf("http://h%d.test/p/%d", i%1000, i), fmt.Sprintf("h%d.test", i%1000)}
	}
	if _, err := pool.CopyFrom(ctx, pgx.Identifier{"urls"}, []string{"crawl_id", "url_hash", "url", "host"}, pgx.CopyFromRows(rows)); err != nil {
		b.Fatal(err)
	}
	return s, hashes
}

// BenchmarkBloomRebuild1M compares a worker's two ways to a warm filter at 1,000,000 URLs:
// streaming the seen-set from Postgres, or loading a snapshot from MinIO.
func BenchmarkBloomRebuild1M(b *testing.B) {
	const n = 1_000_000
	s, _ := seedFrontier(b, n)
	blobs := testenv.Blob(b)
	ctx := context.Background()
	var pgTime, snapTime time.Duration
	var snapBytes int
	for i := 0; i < b.N; i++ {
		f := seen.New(10_000_000, 1e-6, true)
		start := time.Now()
		rows, err := s.Frontier().SeenRows(ctx)
		if err != nil {
			b.Fatal(err)
		}
		got, err := f.Rebuild(rows)
		rows.Close()
		if err != nil || got != n {
			b.Fatalf("rebuilt %d, %v", got, err)
		}
		pgTime += time.Since(start)

		var buf bytes.Buffer
		if _, err := f.WriteTo(&buf); err != nil {
			b.Fatal(err)
		}
		snapBytes = buf.Len()
		if err := blobs.Put(ctx, "seen/bloom.bin", buf.Bytes(), "application/octet-stream"); err != nil {
			b.Fatal(err)
		}
		start = time.Now()
		raw, err := blobs.Get(ctx, "seen/bloom.bin", 1<<30)
		if err != nil {
			b.Fatal(err)
		}
		g := seen.New(10_000_000, 1e-6, true)
		if _, err := g.ReadFrom(bytes.NewReader(raw)); err != nil {
			b.Fatal(err)
		}
		snapTime += time.Since(start)
	}
	b.ReportMetric(float64(pgTime.Milliseconds())/float64(b.N), "ms-from-postgres")
	b.ReportMetric(float64(snapTime.Milliseconds())/float64(b.N), "ms-from-snapshot")
	b.ReportMetric(float64(snapBytes)/(1<<20), "snapshot-MiB")
}

// BenchmarkAdmitLinks measures link admission (batches of 500, 90% already seen, as on most
// pages) straight to Postgres and behind an approximate Bloom filter.
func BenchmarkAdmitLinks(b *testing.B) {
	s, hashes := seedFrontier(b, 200_000)
	ctx := context.Background()
	for _, mode := range []string{"postgres-only", "bloom-approximate"} {
		b.Run(mode, func(b *testing.B) {
			f := seen.New(10_000_000, 1e-6, true)
			if mode == "bloom-approximate" {
				rows, _ := s.Frontier().SeenRows(ctx)
				_, _ = f.Rebuild(rows)
				rows.Close()
			}
			links := 0
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				batch := make([]store.Candidate, 0, 500)
				for j := 0; j < 500; j++ {
					var h []byte
					if j%10 == 0 { // new
						h = make([]byte, 16)
						_, _ = rand.Read(h)
					} else {
						h = hashes[(i*500+j)%len(hashes)]
					}
					batch = append(batch, store.Candidate{URL: fmt.Sprintf("http://n.test/%x", h), Hash: h, Host: "n.test", Source: "link"})
				}
				keep := batch[:0:0]
				for _, c := range batch {
					if mode == "postgres-only" || !f.Skip("bench", c.Hash) {
						keep = append(keep, c)
					}
				}
				if _, err := s.Frontier().Admit(ctx, "bench", keep, admit.Budget(0), -1); err != nil {
					b.Fatal(err)
				}
				links += len(batch)
			}
			b.ReportMetric(float64(links)/b.Elapsed().Seconds(), "links/s")
		})
	}
}
