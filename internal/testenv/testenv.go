// Package testenv gives integration and end-to-end tests isolated handles on the real local
// stack that `make up` starts: a fresh Postgres database, a fresh MinIO bucket, a Temporal
// client and unique task queues. A missing service fails the test with the command that starts
// it; it never skips, so a broken stack can not pass as green.
package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/client"

	"github.com/trawlerdev/trawler/internal/app"
	"github.com/trawlerdev/trawler/internal/blob"
	"github.com/trawlerdev/trawler/internal/config"
	"github.com/trawlerdev/trawler/internal/store"
)

const hint = "start the local stack with `make up` (or run `make test`, which does)"

// Config returns the configuration the environment describes, with task queues unique to t so
// parallel tests never steal each other's tasks.
func Config(t testing.TB) *config.Config {
	t.Helper()
	cfg, err := config.Load(nil, nil, os.Getenv)
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	id := Unique("")
	cfg.TaskQueue = "test-" + id
	cfg.FetchTaskQueue = "test-fetch-" + id
	cfg.ProcessTaskQueue = "test-process-" + id
	cfg.RenderTaskQueue = "test-render-" + id
	cfg.IDPrefix = "test-" + id + "/"
	cfg.ShutdownTimeout = 5 * time.Second
	return cfg
}

// FreeAddr is a loopback address whose port nothing listens on right now: for a server a test
// starts there, or for a node that is down.
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// Unique returns prefix followed by 8 random hex characters.
func Unique(prefix string) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// Postgres creates an empty database for t, migrates it and drops it when t ends.
// It returns the pool and the database's URL (for subprocesses).
func Postgres(t testing.TB) (*pgxpool.Pool, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg := Config(t)
	admin, err := store.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		t.Fatalf("testenv: postgres: %v; %s", err, hint)
	}
	defer admin.Close()
	name := Unique("trawler_test_")
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("testenv: create database: %v", err)
	}
	u, err := url.Parse(cfg.DatabaseURL)
	if err != nil {
		t.Fatalf("testenv: DATABASE_URL: %v", err)
	}
	u.Path = "/" + name
	dbURL := u.String()
	pool, err := store.Open(ctx, dbURL)
	if err != nil {
		t.Fatalf("testenv: open %s: %v", name, err)
	}
	if _, err := store.Migrate(ctx, pool); err != nil {
		t.Fatalf("testenv: migrate %s: %v", name, err)
	}
	t.Cleanup(func() {
		pool.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		admin, err := store.Open(ctx, cfg.DatabaseURL)
		if err != nil {
			return
		}
		defer admin.Close()
		_, _ = admin.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	})
	return pool, dbURL
}

// Blob returns a store on a new bucket unique to t.
func Blob(t testing.TB) *blob.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg := Config(t)
	cfg.S3Bucket = strings.ToLower(Unique("test-"))
	s, err := app.OpenBlob(ctx, cfg)
	if err != nil {
		t.Fatalf("testenv: minio: %v; %s", err, hint)
	}
	return s
}

// Temporal returns a client to the dev server, closed when t ends.
func Temporal(t testing.TB) client.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	cfg := Config(t)
	c, err := app.DialTemporal(ctx, cfg, Logger(t))
	if err != nil {
		t.Fatalf("testenv: %v; %s", err, hint)
	}
	t.Cleanup(c.Close)
	return c
}

// Logger writes warnings and errors to stderr. (Not to t.Log: the SDK logs from its own
// goroutines, which may outlive the test.)
func Logger(testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}
