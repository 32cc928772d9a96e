package deliver

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/export"
	"github.com/trawlerdev/trawler/internal/netguard"
	"github.com/trawlerdev/trawler/internal/testenv"
)

// benchStore is a fake store of n documents shaped like a crawled page's: 30 links, a title,
// and 600 bytes of extracted values.
func benchStore(n int, out crawl.Output) *fakeStore {
	f := newFakeStore(n, out)
	for i := range f.docs {
		p := &f.docs[i].StoredPage
		for j := range 30 {
			p.Links = append(p.Links, fmt.Sprintf("http://docs.test/library/page-%d.html#section-%d", j, i))
		}
		p.ContentType, p.Lang, p.WARCFile = "text/html; charset=utf-8", "en", "warc/c/c-00001.warc.gz"
		p.Extract = fmt.Sprintf(`{"doc": {"title": "Built-in Functions %d", "sections": ["Built-in Functions", "Notes"], "links": [%s], "meta": {"viewport": "width=device-width, initial-scale=1.0", "description": "The Python interpreter has a number of functions and types built into it that are always available."}}}`,
			i, `"#abs", "#aiter", "#all", "#anext", "#any", "#ascii", "#bin", "#bool", "#breakpoint", "#bytearray", "#bytes", "#callable", "#chr", "#classmethod", "#compile"`)
	}
	return f
}

// BenchmarkWebhookRecord is what a webhook costs a record: reading it from the (fake) store,
// encoding its batch of 100 as JSON, signing it and POSTing it to a receiver on loopback.
func BenchmarkWebhookRecord(b *testing.B) {
	b.Setenv("BENCH_HOOK_KEY", "s3cret")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.Copy(io.Discard, r.Body) }))
	defer srv.Close()
	out := crawl.Output{Name: "hook", Webhook: &crawl.Webhook{URL: srv.URL, Secret: "secret:env:BENCH_HOOK_KEY"}}
	hook := NewWebhook(netguard.New(netguard.Options{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}), nil, 10*time.Second, "bench")
	benchRecords(b, out, func(f *fakeStore) *Deliverer {
		return &Deliverer{Store: f, Records: &export.Source{}, Webhook: hook}
	})
}

// BenchmarkDatasetRecord is what a dataset costs a record: its batch of 100 encoded as Parquet
// (zstd) and PUT to the bucket (MinIO on loopback).
func BenchmarkDatasetRecord(b *testing.B) {
	bl := testenv.Blob(b)
	out := crawl.Output{Name: "lake", Dataset: &crawl.Dataset{}}
	benchRecords(b, out, func(f *fakeStore) *Deliverer {
		return &Deliverer{Store: f, Records: &export.Source{}, Dataset: &Dataset{Blob: bl}}
	})
}

// benchRecords delivers b.N records through the output, in runs of up to 10,000 documents.
func benchRecords(b *testing.B, out crawl.Output, deliverer func(*fakeStore) *Deliverer) {
	b.ReportAllocs()
	for left := b.N; left > 0; {
		n := min(left, 10_000)
		f := benchStore(n, out)
		d := deliverer(f)
		res, err := d.Run(context.Background(), Input{CrawlID: "c", Output: out.Name, For: time.Hour}, nil)
		if err != nil || res.Records != n {
			b.Fatalf("%+v %v", res, err)
		}
		left -= n
	}
}
