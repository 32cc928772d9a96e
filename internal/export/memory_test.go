package export_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/blob"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/export"
	"github.com/trawlerdev/trawler/internal/segment"
	"github.com/trawlerdev/trawler/internal/store"
	"github.com/trawlerdev/trawler/internal/testenv"
)

// BenchmarkExportMemory exports crawls of BENCH_EXPORT_PAGES stored pages (default 5,000 and
// 50,000), each with 4 KB of main text and 20 links, and reports the peak heap the export took
// over the heap before it: flat in the crawl's size is what "constant memory" means.
func BenchmarkExportMemory(b *testing.B) {
	sizes := []int{5000, 50000}
	if v, err := strconv.Atoi(os.Getenv("BENCH_EXPORT_PAGES")); err == nil && v > 0 {
		sizes = []int{v}
	}
	pool, _ := testenv.Postgres(b)
	blobs := testenv.Blob(b)
	st := store.New(pool)
	ctx := context.Background()
	for _, n := range sizes {
		id := fmt.Sprintf("mem%d", n)
		seedPages(b, ctx, st, blobs, id, n)
		for _, format := range []string{"jsonl", "parquet"} {
			b.Run(fmt.Sprintf("%s/%d", format, n), func(b *testing.B) {
				for range b.N {
					src := &export.Source{Store: st, Texts: segment.NewReader(blobs, 16<<20)}
					runtime.GC()
					var base runtime.MemStats
					runtime.ReadMemStats(&base)
					var peak atomic.Uint64
					done := make(chan struct{})
					go func() {
						t := time.NewTicker(5 * time.Millisecond)
						defer t.Stop()
						var m runtime.MemStats
						for {
							select {
							case <-done:
								return
							case <-t.C:
								runtime.ReadMemStats(&m)
								if m.HeapInuse > peak.Load() {
									peak.Store(m.HeapInuse)
								}
							}
						}
					}()
					start := time.Now()
					got, err := src.Write(ctx, io.Discard, export.Options{Crawl: id, Format: format})
					close(done)
					if err != nil || got != int64(n) {
						b.Fatalf("exported %d of %d: %v", got, n, err)
					}
					b.ReportMetric(float64(peak.Load()-min(peak.Load(), base.HeapInuse))/(1<<20), "peak-heap-MB")
					b.ReportMetric(float64(n)/time.Since(start).Seconds(), "pages/s")
				}
			})
		}
	}
}

// seedPages stores n pages of a crawl as a crawl would leave them: urls, fetches (with a body
// key), documents with their text in segments, and links between them.
func seedPages(b *testing.B, ctx context.Context, st *store.Store, blobs *blob.Store, id string, n int) {
	b.Helper()
	if _, err := st.Crawls().CreateCrawl(ctx, id, crawl.Spec{Name: id, Seeds: []string{"http://h.test/"}}.WithDefaults()); err != nil {
		b.Fatal(err)
	}
	w := segment.NewWriter(blobs, segment.Options{Prefix: "segments/text", Name: "bench", MaxAge: time.Minute, MaxBytes: 8 << 20})
	text := strings.Repeat("words of the page's main text ", 140) // ~4 KB
	keys := make([]string, n)
	var waits []func(context.Context) error
	for i := range n {
		ref, wait, err := w.Add(id, []byte(fmt.Sprintf("%d %s", i, text)))
		if err != nil {
			b.Fatal(err)
		}
		keys[i], waits = ref, append(waits, wait)
	}
	w.Flush()
	for _, wait := range waits {
		if err := wait(ctx); err != nil {
			b.Fatal(err)
		}
	}
	pool := st.Pool()
	if _, err := pool.Exec(ctx, `
		INSERT INTO urls (crawl_id, url_hash, url, host, depth, state)
		SELECT $1, decode(md5($1 || i::text), 'hex'), 'http://h' || (i % 100) || '.test/p/' || i, 'h' || (i % 100) || '.test', 1, 'done'
		FROM generate_series(0, $2 - 1) i`, id, n); err != nil {
		b.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `
		INSERT INTO fetches (crawl_id, url_hash, fetch_key, fetched_at, status, duration_ms, bytes, content_type, content_hash, body_key)
		SELECT $1, decode(md5($1 || i::text), 'hex'), $1 || '/' || i, now(), 200, 5, 6000, 'text/html', sha256(i::text::bytea), 'segments/bodies/x#0+1'
		FROM generate_series(0, $2 - 1) i`, id, n); err != nil {
		b.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `
		INSERT INTO documents (crawl_id, url_hash, content_hash, body_key, size, title, lang, text_key, processed_at,
			link_to, link_kind, link_nofollow)
		SELECT $1, decode(md5($1 || i::text), 'hex'), sha256(i::text::bytea), 'segments/bodies/x#0+1', 6000, 'Page ' || i, 'en', ($3::text[])[i + 1], now(),
			ARRAY(SELECT decode(md5($1 || ((i + j) % $2)::text), 'hex') FROM generate_series(1, 20) j),
			array_fill('a'::text, ARRAY[20]), array_fill(false, ARRAY[20])
		FROM generate_series(0, $2 - 1) i`, id, n, keys); err != nil {
		b.Fatal(err)
	}
}
