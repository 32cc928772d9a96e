package deliver

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	"github.com/trawlerdev/trawler/internal/blob"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/export"
)

// Dataset writes Parquet parts to the bucket.
type Dataset struct {
	Blob *blob.Store
}

type datasetSink struct {
	ds   *Dataset
	d    *Deliverer
	spec crawl.Spec
	out  crawl.Output
}

// hourLayout names a partition by the hour its pages were fetched (UTC), sortable as text.
const hourLayout = "2006-01-02T15"

// PartKey is where a batch's part for one hour goes: PREFIX/crawl=NAME/hour=HOUR/part-BATCH.parquet.
// Every try of a batch writes the same keys, so a batch tried again replaces its parts (each
// PUT whole or not at all) instead of adding to them.
func PartKey(prefix, crawlID, hour, batchID string) string {
	return fmt.Sprintf("%s/crawl=%s/hour=%s/part-%s.parquet", prefix, crawlID, hour, batchID)
}

// send writes the batch as one Parquet part per hour its pages were fetched in.
func (s *datasetSink) send(ctx context.Context, b *batch) error {
	type part struct {
		buf bytes.Buffer
		rw  *export.RecordWriter
	}
	parts := map[string]*part{}
	var size int64
	o := recordOptions(b.crawlID, "parquet", s.out)
	for i, p := range b.pages {
		if i > 0 && size >= maxBatchBytes {
			break
		}
		hour := p.FetchedAt.UTC().Format(hourLayout)
		pt := parts[hour]
		if pt == nil {
			pt = &part{}
			rw, err := s.d.Records.NewRecordWriter(&pt.buf, o, s.spec.Extract)
			if err != nil {
				return err
			}
			pt.rw, parts[hour] = rw, pt
		}
		before := pt.rw.Size()
		if err := pt.rw.Write(ctx, p.StoredPage); err != nil {
			return err
		}
		size += pt.rw.Size() - before
		b.to = p.At
	}
	hours := make([]string, 0, len(parts))
	for h := range parts {
		hours = append(hours, h)
	}
	slices.Sort(hours)
	prefix := s.out.Dataset.PrefixOrDefault()
	for _, h := range hours {
		pt := parts[h]
		if err := pt.rw.Close(); err != nil {
			return fmt.Errorf("dataset %s: encode: %w", s.out.Name, err)
		}
		if err := s.ds.Blob.Put(ctx, PartKey(prefix, b.crawlID, h, b.id), pt.buf.Bytes(), "application/vnd.apache.parquet"); err != nil {
			return fmt.Errorf("dataset %s: %w", s.out.Name, err)
		}
	}
	return nil
}
