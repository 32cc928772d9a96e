// Package store owns Trawler's PostgreSQL access: the connection pool and the schema
// migrations from package schema. Its statements are grouped by aggregate (aggregates.go:
// Frontier, Fetches, Documents, Hosts, Renders, Archive, Crawls, Deletes, Inspect, and
// HostSchedule, the host schedule's surface that only internal/pacing calls); a stage is
// handed the aggregates it uses behind narrow interfaces of its own, never the whole Store.
package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/trawlerdev/trawler/internal/iostats"
)

// Open connects to Postgres and checks the connection, retrying briefly so a process started
// together with the database does not fail on the first refused connection.
func Open(ctx context.Context, url string) (*pgxpool.Pool, error) {
	return OpenPool(ctx, url, 0)
}

// OpenPool is Open with at most maxConns connections (0: pgx's default, or the URL's
// pool_max_conns). Processes share Postgres's max_connections: a bound of their own, not one
// that grows with the machine's cores, is what an operator can budget.
func OpenPool(ctx context.Context, url string, maxConns int) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("store: parse DATABASE_URL: %w", err)
	}
	if maxConns > 0 {
		cfg.MaxConns = int32(maxConns)
	}
	cfg.ConnConfig.Tracer = iostats.PGTracer{}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store: connect: %w", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		pingCtx, cancel := context.WithTimeout(ctx, 3*time.Second)
		err = pool.Ping(pingCtx)
		cancel()
		if err == nil {
			return pool, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			pool.Close()
			return nil, fmt.Errorf("store: postgres at %s:%d not reachable: %w", cfg.ConnConfig.Host, cfg.ConnConfig.Port, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
