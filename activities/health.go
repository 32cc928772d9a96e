package activities

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/trawlerdev/trawler/internal/blob"
	"github.com/trawlerdev/trawler/internal/confine"
)

// Health checks, from inside a worker, that the worker reaches its stores (and, on a render
// worker, that its browser answers).
type Health struct {
	DB      *pgxpool.Pool
	Blob    *blob.Store
	Browser interface{ Check(context.Context) error } // nil: no browser on this worker
}

// HealthReport is what one worker saw.
type HealthReport struct {
	Worker          string `json:"worker"`
	PostgresVersion string `json:"postgresVersion"`
	SchemaVersion   int    `json:"schemaVersion"`
	Bucket          string `json:"bucket"`
	LatencyMs       int64  `json:"latencyMs"`
	// Isolation is what the worker's PDF readers and browser get (confine.Isolation).
	Isolation string `json:"isolation"`
}

// Check pings Postgres (and reads the schema version) and MinIO.
func (h *Health) Check(ctx context.Context) (HealthReport, error) {
	start := time.Now()
	host, _ := os.Hostname()
	r := HealthReport{Worker: fmt.Sprintf("%s/%d", host, os.Getpid()), Bucket: h.Blob.Bucket(), Isolation: confine.Isolation()}
	if err := h.DB.QueryRow(ctx, `SELECT current_setting('server_version'), coalesce(max(version), 0) FROM schema_migrations`).
		Scan(&r.PostgresVersion, &r.SchemaVersion); err != nil {
		return r, fmt.Errorf("health: postgres: %w", err)
	}
	if err := h.Blob.Ping(ctx); err != nil {
		return r, fmt.Errorf("health: %w", err)
	}
	if h.Browser != nil {
		if err := h.Browser.Check(ctx); err != nil { // a dead browser is started again by the probe
			return r, fmt.Errorf("health: browser: %w", err)
		}
	}
	r.LatencyMs = time.Since(start).Milliseconds()
	return r, nil
}
