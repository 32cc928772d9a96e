package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Robots is a cached robots.txt of one scheme of a host.
type Robots struct {
	Status    int
	Body      string
	FetchedAt time.Time
	ExpiresAt time.Time
	Sitemaps  []string
}

// HostRobots returns the cached robots.txt of host for scheme (http or https), or nil if none
// is cached.
func (agg Hosts) HostRobots(ctx context.Context, host, scheme string) (*Robots, error) {
	s := agg.s
	r, _, err := s.Hosts().HostRobotsAndHealth(ctx, host, scheme)
	return r, err
}

// HostRobotsAndHealth is HostRobots, and whether the host's dead-site clock runs (it failed
// lately, see HostFailing), in the same round trip: a lease that knows its host is not failing
// need not tell Postgres it is healthy.
func (agg Hosts) HostRobotsAndHealth(ctx context.Context, host, scheme string) (*Robots, bool, error) {
	s := agg.s
	var r Robots
	var status *int
	var body []byte
	var fetched, expires *time.Time
	var failing bool
	err := s.pool.QueryRow(ctx, `SELECT r.status, r.body, r.fetched_at, r.expires_at, coalesce(r.sitemaps, '{}'),
			h.failing_since IS NOT NULL
		FROM hosts h LEFT JOIN robots r ON r.host = h.host AND r.scheme = $2 WHERE h.host = $1`, host, scheme).Scan(
		&status, &body, &fetched, &expires, &r.Sitemaps, &failing)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("store: robots of %s://%s: %w", scheme, host, err)
	}
	if status == nil {
		return nil, failing, nil
	}
	r.Status = *status
	r.Body = string(body)
	if fetched != nil {
		r.FetchedAt = *fetched
	}
	if expires != nil {
		r.ExpiresAt = *expires
	}
	return &r, failing, nil
}

// SaveRobots caches the robots.txt of one scheme of a host and the crawl-delay it sets (0:
// none). The host's crawl_delay_ms becomes the largest of its schemes' delays: both schemes'
// requests go to one server under one schedule.
func (agg Hosts) SaveRobots(ctx context.Context, host, scheme string, r Robots, crawlDelay time.Duration) error {
	s := agg.s
	var delay *int64
	if crawlDelay > 0 {
		ms := crawlDelay.Milliseconds()
		delay = &ms
	}
	if r.Sitemaps == nil {
		r.Sitemaps = []string{}
	}
	// The robots row's foreign key is checked at the end of the statement, after the host's row
	// is there. The other scheme's delay is read as it was before the statement.
	_, err := s.pool.Exec(ctx, `WITH saved AS (
			INSERT INTO robots (host, scheme, status, body, fetched_at, expires_at, sitemaps, crawl_delay_ms)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
			ON CONFLICT (host, scheme) DO UPDATE SET status = $3, body = $4, fetched_at = $5, expires_at = $6,
				sitemaps = $7, crawl_delay_ms = $8)
		INSERT INTO hosts (host, crawl_delay_ms) VALUES ($1, $8)
		ON CONFLICT (host) DO UPDATE SET crawl_delay_ms = (SELECT max(d) FROM (
				SELECT crawl_delay_ms FROM robots WHERE host = $1 AND scheme <> $2 UNION ALL SELECT $8::int) AS ds (d)),
			updated_at = now()`,
		host, scheme, r.Status, []byte(r.Body), r.FetchedAt, r.ExpiresAt, texts(r.Sitemaps), delay)
	if err != nil {
		return fmt.Errorf("store: save robots of %s://%s: %w", scheme, host, err)
	}
	return nil
}

// StartSitemapDiscovery marks that a crawl looks for a host's sitemaps now; false means it
// already has.
func (agg Hosts) StartSitemapDiscovery(ctx context.Context, crawlID, host string) (bool, error) {
	s := agg.s
	tag, err := s.pool.Exec(ctx, `UPDATE crawl_hosts SET sitemaps_at = now() WHERE crawl_id = $1 AND host = $2 AND sitemaps_at IS NULL`,
		crawlID, host)
	if err != nil {
		return false, fmt.Errorf("store: sitemap discovery on %s: %w", host, err)
	}
	return tag.RowsAffected() == 1, nil
}
