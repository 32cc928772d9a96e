package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/trawlerdev/trawler/internal/crawl"
)

// ProgressByScan counts what CrawlProgress reads from counters the slow way, by scanning the
// crawl's URLs and fetches: the reference the counters are checked against (tests, and a
// crawl whose counters disagree with its queue). Waiting is not filled in.
func (agg Inspect) ProgressByScan(ctx context.Context, id string) (crawl.CrawlProgress, error) {
	s := agg.s
	p := crawl.CrawlProgress{CrawlID: id, ByState: map[crawl.URLState]int{}, Skipped: map[string]int{}, Rejected: map[string]int{}, ErrorClass: map[string]int{}}
	err := s.pool.QueryRow(ctx, `SELECT state, admitted FROM crawls WHERE id = $1`, id).Scan(&p.State, &p.Admitted)
	if errors.Is(err, pgx.ErrNoRows) {
		return p, fmt.Errorf("store: crawl %s: %w", id, ErrNoCrawl)
	}
	if err != nil {
		return p, fmt.Errorf("store: progress %s: %w", id, err)
	}
	rows, err := s.pool.Query(ctx, `SELECT state, coalesce(skip_reason, ''), count(*) FROM urls WHERE crawl_id = $1 GROUP BY 1, 2`, id)
	if err != nil {
		return p, fmt.Errorf("store: progress %s: %w", id, err)
	}
	for rows.Next() {
		var state crawl.URLState
		var reason string
		var n int
		if err := rows.Scan(&state, &reason, &n); err != nil {
			return p, err
		}
		p.ByState[state] += n
		if state == crawl.URLSkipped {
			p.Skipped[reason] += n
		}
		switch state {
		case crawl.URLQueued, crawl.URLClaimed, crawl.URLFetched:
			p.Pending += int64(n)
		case crawl.URLDead:
			p.Dead += int64(n)
		}
	}
	if err := rows.Err(); err != nil {
		return p, err
	}
	err = s.pool.QueryRow(ctx, `SELECT count(DISTINCT url_hash) FILTER (WHERE error IS NULL),
			count(*) FILTER (WHERE error IS NOT NULL), coalesce(sum(bytes), 0), min(fetched_at), max(fetched_at)
		FROM fetches WHERE crawl_id = $1`, id).Scan(&p.Fetched, &p.Errors, &p.Bytes, &p.FirstFetch, &p.LastFetch)
	if err != nil {
		return p, fmt.Errorf("store: progress %s: %w", id, err)
	}
	cls, err := s.pool.Query(ctx, `SELECT fetch_error_class(status, error), count(*)
		FROM fetches WHERE crawl_id = $1 AND error IS NOT NULL GROUP BY 1`, id)
	if err != nil {
		return p, fmt.Errorf("store: progress %s: %w", id, err)
	}
	for cls.Next() {
		var class string
		var n int
		if err := cls.Scan(&class, &n); err != nil {
			return p, err
		}
		p.ErrorClass[class] = n
	}
	if err := cls.Err(); err != nil {
		return p, err
	}
	rej, err := s.pool.Query(ctx, `SELECT reason, count FROM crawl_rejections WHERE crawl_id = $1`, id)
	if err != nil {
		return p, fmt.Errorf("store: progress %s: %w", id, err)
	}
	for rej.Next() {
		var reason string
		var n int
		if err := rej.Scan(&reason, &n); err != nil {
			return p, err
		}
		p.Rejected[reason] = n
	}
	if err := rej.Err(); err != nil {
		return p, err
	}
	err = s.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM documents WHERE crawl_id = $1),
		(SELECT count(*) FROM crawl_hosts WHERE crawl_id = $1)`, id).Scan(&p.Pages, &p.Hosts)
	if err != nil {
		return p, fmt.Errorf("store: progress %s: %w", id, err)
	}
	return p, nil
}
