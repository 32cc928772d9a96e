package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/trawlerdev/trawler/internal/crawl"
)

// CrawlStats reads a crawl's progress with what an operator asks of it besides: duplicates,
// robots refusals and throughput (a scan of its documents and fetches each).
func (agg Inspect) CrawlStats(ctx context.Context, id string, now time.Time) (crawl.CrawlProgress, error) {
	s := agg.s
	p, err := s.Crawls().CrawlProgress(ctx, id)
	if err != nil {
		return p, err
	}
	p.RobotsBlocked = int64(p.Skipped["robots.txt"] + p.Skipped["robots.txt unreachable"])
	var lastMinute, peak int64
	err = s.pool.QueryRow(ctx, `SELECT
			(SELECT count(*) FROM documents WHERE crawl_id = $1 AND dup_of IS NOT NULL),
			(SELECT count(*) FROM documents WHERE crawl_id = $1 AND dup_kind IN ('simhash', 'minhash')),
			(SELECT count(*) FROM fetches WHERE crawl_id = $1 AND fetched_at > $2::timestamptz - interval '1 minute'),
			(SELECT coalesce(max(n), 0) FROM (SELECT count(*) AS n FROM fetches WHERE crawl_id = $1
				GROUP BY date_trunc('minute', fetched_at)) m)`, id, now).Scan(&p.Duplicates, &p.NearDuplicates, &lastMinute, &peak)
	if err != nil {
		return p, fmt.Errorf("store: stats of %s: %w", id, err)
	}
	p.Throughput = &crawl.Throughput{Now: float64(lastMinute) / 60, Peak: float64(peak) / 60, Avg: p.AvgPagesPerSec()}
	p.PagesPerSec = p.Throughput.Avg
	return p, nil
}

// CrawlIDs lists crawls, newest first.
func (agg Inspect) CrawlIDs(ctx context.Context) ([]string, error) {
	s := agg.s
	rows, err := s.pool.Query(ctx, `SELECT id FROM crawls ORDER BY created_at DESC LIMIT 1000`)
	if err != nil {
		return nil, fmt.Errorf("store: crawls: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// deref reads an optional text column of the inspect views (NULL: "").
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
