package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Robots is a host's cached robots.txt.
type Robots struct {
	Status    int
	Body      string
	FetchedAt time.Time
	ExpiresAt time.Time
	Sitemaps  []string
}

// HostRobots returns the cached robots.txt of host, or nil if none is cached.
func (s *Store) HostRobots(ctx context.Context, host string) (*Robots, error) {
	r, _, err := s.HostRobotsAndHealth(ctx, host)
	return r, err
}

// HostRobotsAndHealth is HostRobots, and whether the host's dead-site clock runs (it failed
// lately, see HostFailing), in the same round trip: a lease that knows its host is not failing
// need not tell Postgres it is healthy.
func (s *Store) HostRobotsAndHealth(ctx context.Context, host string) (*Robots, bool, error) {
	var r Robots
	var status *int
	var body []byte
	var fetched, expires *time.Time
	var failing bool
	err := s.pool.QueryRow(ctx, `SELECT robots_status, robots_body, robots_fetched_at, robots_expires_at, robots_sitemaps,
			failing_since IS NOT NULL
		FROM hosts WHERE host = $1`, host).Scan(&status, &body, &fetched, &expires, &r.Sitemaps, &failing)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("store: robots of %s: %w", host, err)
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

// SaveRobots caches a host's robots.txt and the crawl-delay it sets (0: none).
func (s *Store) SaveRobots(ctx context.Context, host string, r Robots, crawlDelay time.Duration) error {
	var delay *int64
	if crawlDelay > 0 {
		ms := crawlDelay.Milliseconds()
		delay = &ms
	}
	if r.Sitemaps == nil {
		r.Sitemaps = []string{}
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO hosts (host, robots_status, robots_body, robots_fetched_at, robots_expires_at, robots_sitemaps, crawl_delay_ms)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (host) DO UPDATE SET robots_status = $2, robots_body = $3, robots_fetched_at = $4, robots_expires_at = $5,
			robots_sitemaps = $6, crawl_delay_ms = $7, updated_at = now()`,
		host, r.Status, []byte(r.Body), r.FetchedAt, r.ExpiresAt, texts(r.Sitemaps), delay)
	if err != nil {
		return fmt.Errorf("store: save robots of %s: %w", host, err)
	}
	return nil
}

// StartSitemapDiscovery marks that a crawl looks for a host's sitemaps now; false means it
// already has.
func (s *Store) StartSitemapDiscovery(ctx context.Context, crawlID, host string) (bool, error) {
	tag, err := s.pool.Exec(ctx, `UPDATE crawl_hosts SET sitemaps_at = now() WHERE crawl_id = $1 AND host = $2 AND sitemaps_at IS NULL`,
		crawlID, host)
	if err != nil {
		return false, fmt.Errorf("store: sitemap discovery on %s: %w", host, err)
	}
	return tag.RowsAffected() == 1, nil
}
