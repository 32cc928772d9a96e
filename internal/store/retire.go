package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// HostFailing records that host failed in a way that may mean it is gone ("dns", "front page
// gone"); the first such failure starts the clock.
func (agg Hosts) HostFailing(ctx context.Context, host, reason string) error {
	s := agg.s
	_, err := s.pool.Exec(ctx, `INSERT INTO hosts (host, failing_since, failing_reason) VALUES ($1, now(), $2)
		ON CONFLICT (host) DO UPDATE SET failing_since = coalesce(hosts.failing_since, now()), failing_reason = $2`, host, reason)
	if err != nil {
		return fmt.Errorf("store: host %s failing: %w", host, err)
	}
	return nil
}

// HostHealthy clears a failing host's clock (it answered).
func (agg Hosts) HostHealthy(ctx context.Context, host string) error {
	s := agg.s
	_, err := s.pool.Exec(ctx, `UPDATE hosts SET failing_since = NULL, failing_reason = NULL WHERE host = $1 AND failing_since IS NOT NULL`, host)
	if err != nil {
		return fmt.Errorf("store: host %s healthy: %w", host, err)
	}
	return nil
}

// RetireIfDead retires host when it has been failing for longer than after, marking its pending
// URLs (of every crawl) skipped with the reason. It reports whether the host is retired.
func (agg Hosts) RetireIfDead(ctx context.Context, host string, after time.Duration) (bool, error) {
	s := agg.s
	var reason string
	err := s.pool.QueryRow(ctx, `UPDATE hosts SET retired_at = coalesce(retired_at, now()), retired_reason = coalesce(retired_reason, failing_reason)
		WHERE host = $1 AND failing_since IS NOT NULL AND failing_since <= now() - $2::interval
		RETURNING retired_reason`, host, after).Scan(&reason)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("store: retire %s: %w", host, err)
	}
	if _, err := s.pool.Exec(ctx, `UPDATE urls SET state = 'skipped', skip_reason = 'host retired: ' || $2, claimed_until = NULL, updated_at = now()
		WHERE host = $1 AND (state = 'queued' OR state = 'claimed')`, host, reason); err != nil {
		return true, fmt.Errorf("store: retire %s: %w", host, err)
	}
	return true, nil
}
