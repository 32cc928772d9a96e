package store

import (
	"context"
	"fmt"
	"time"
)

// HostDue says when host's next queued URL of a running crawl is due (nil: none queued) and
// how many pages fetched under owners await processing, in one cheap round trip: what a
// fetch lease whose host ran dry looks at before it claims again.
func (agg Frontier) HostDue(ctx context.Context, host string, owners []string) (*time.Time, int, error) {
	s := agg.s
	var next *time.Time
	var awaiting int
	err := s.pool.QueryRow(ctx, `SELECT
			(SELECT u.next_fetch_at FROM urls u JOIN crawls c ON c.id = u.crawl_id AND c.state = 'running'
				WHERE u.host = $1 AND u.state = 'queued' ORDER BY u.next_fetch_at LIMIT 1),
			(SELECT count(*) FROM urls WHERE host = $1 AND state = 'fetched' AND claimed_by = ANY($2))`,
		host, owners).Scan(&next, &awaiting)
	if err != nil {
		return nil, 0, fmt.Errorf("store: when %s is due: %w", host, err)
	}
	return next, awaiting, nil
}
