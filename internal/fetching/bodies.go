package fetching

import (
	"context"
	"fmt"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/metrics"
	"github.com/trawlerdev/trawler/internal/policy"
)

// keepBody stores a 2xx body once per digest and returns its reference and the wait for it to
// be stored (nil: it already is). An unchanged recrawl points at the URL's last body; a crawl
// that deduplicates (spec.dedupAgainst) points at any body with the same digest it, or a crawl
// it names, holds. Only a body found nowhere is stored.
func (f *Stage) keepBody(ctx context.Context, ci *policy.Crawl, u crawl.Claimed, h [32]byte, change crawl.Change, body []byte) (string, func(context.Context) error, error) {
	if change == crawl.Unchanged && u.BodyKey != "" {
		f.Hooks.Count.Add(metrics.BodiesReused, 1, "from", "recrawl")
		return u.BodyKey, nil, nil
	}
	if len(ci.Spec.DedupAgainst) > 0 {
		p, ok, err := f.Payloads.FindPayload(ctx, u.CrawlID, ci.Spec.DedupAgainst, h[:])
		if err != nil {
			return "", nil, fmt.Errorf("fetching: find payload of %s: %w", u.URL, err)
		}
		if ok {
			from := "crawl"
			if p.OwnerCrawl != u.CrawlID {
				from = "earlier crawl"
			}
			f.Hooks.Count.Add(metrics.BodiesReused, 1, "from", from)
			return p.BodyKey, nil, nil
		}
	}
	return f.StoreBody(ctx, u.CrawlID, body)
}
