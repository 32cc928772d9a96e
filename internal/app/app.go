// Package app owns process start-up shared by the worker and the CLI: logging, and
// connecting to Postgres (with migrations), MinIO and Temporal from a Config.
package app

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"

	"github.com/trawlerdev/trawler/internal/blob"
	"github.com/trawlerdev/trawler/internal/codec"
	"github.com/trawlerdev/trawler/internal/config"
	"github.com/trawlerdev/trawler/internal/store"
)

// NewLogger builds the process logger from the config's level and format.
func NewLogger(cfg *config.Config) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.LogLevel)) // validated by config
	opts := &slog.HandlerOptions{Level: level}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(os.Stderr, opts))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, opts))
}

// OpenDB connects to Postgres and applies pending migrations.
func OpenDB(ctx context.Context, cfg *config.Config, log *slog.Logger) (*pgxpool.Pool, error) {
	pool, err := store.OpenPool(ctx, cfg.DatabaseURL, cfg.PGMaxConns)
	if err != nil {
		return nil, err
	}
	applied, err := store.Migrate(ctx, pool)
	if err != nil {
		pool.Close()
		return nil, err
	}
	if len(applied) > 0 {
		log.Info("applied schema migrations", "versions", applied)
	}
	return pool, nil
}

// OpenBlob connects to MinIO/S3 and creates the bucket if needed.
func OpenBlob(ctx context.Context, cfg *config.Config) (*blob.Store, error) {
	return blob.New(ctx, blob.Options{
		Endpoint: cfg.S3Endpoint, AccessKey: cfg.S3AccessKey, SecretKey: cfg.S3SecretKey,
		Bucket: cfg.S3Bucket, UseSSL: cfg.S3UseSSL,
	})
}

// DialTemporal connects a Temporal client that logs through log.
func DialTemporal(ctx context.Context, cfg *config.Config, log *slog.Logger) (client.Client, error) {
	return DialTemporalWithMetrics(ctx, cfg, log, nil)
}

// DialTemporalWithMetrics connects a Temporal client whose SDK metrics, and the metrics its
// workflows and activities emit, go to metrics (nil: nowhere).
func DialTemporalWithMetrics(ctx context.Context, cfg *config.Config, log *slog.Logger, metrics client.MetricsHandler) (client.Client, error) {
	target, dialOpts := frontends(cfg.TemporalAddress)
	opts := client.Options{
		HostPort:       target,
		Namespace:      cfg.TemporalNamespace,
		Logger:         tlog.NewStructuredLogger(log.With("component", "temporal-sdk")),
		MetricsHandler: metrics,
		// The SDK gzips every request by default: on a local network that is CPU on both ends
		// (a tenth of a workflow worker's) for bytes nobody pays for.
		ConnectionOptions: client.ConnectionOptions{GrpcCompression: compression(cfg.TemporalCompression), DialOptions: dialOpts},
	}
	if cfg.PayloadKey != "" {
		c, err := codec.New(cfg.PayloadKey)
		if err != nil {
			return nil, err
		}
		opts.DataConverter, opts.FailureConverter = c.DataConverter(), c.FailureConverter()
	}
	c, err := client.DialContext(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("temporal at %s: %w", cfg.TemporalAddress, err)
	}
	return c, nil
}

func compression(name string) client.GrpcCompression {
	if name == "gzip" {
		return &client.GrpcCompressionGzip{}
	}
	return &client.GrpcCompressionNone{}
}
