package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/minio/minio-go/v7"
)

// Await calls open until it succeeds, for at most wait (0: once), backing off from 1 s to 15 s
// and logging each failure. A worker restarted while one of its services is down (MinIO for a
// minute, a Temporal node being replaced) waits for it instead of exiting: a supervisor that
// restarts it would do the same, and a worker with none — a test, a plain shell — would be
// gone for the rest of the crawl.
func Await[T any](ctx context.Context, log *slog.Logger, what string, wait time.Duration, open func(context.Context) (T, error)) (T, error) {
	deadline := time.Now().Add(wait)
	backoff := time.Second
	for attempt := 1; ; attempt++ {
		v, err := open(ctx)
		if err == nil {
			if attempt > 1 {
				log.Info("service answers", "service", what, "attempts", attempt)
			}
			return v, nil
		}
		left := time.Until(deadline)
		if permanent(err) {
			var zero T
			return zero, fmt.Errorf("%s: %w (not waited for: a wrong password or setting does not clear)", what, err)
		}
		if left <= 0 || ctx.Err() != nil {
			var zero T
			if attempt == 1 {
				return zero, err
			}
			return zero, fmt.Errorf("%s: not ready after %d attempts in %v: %w", what, attempt, wait, err)
		}
		log.Warn("waiting for a service", "service", what, "attempt", attempt, "retryIn", min(backoff, left).String(), "error", err)
		select {
		case <-ctx.Done():
			var zero T
			return zero, fmt.Errorf("%s: %w (stopped while waiting)", what, err)
		case <-time.After(min(backoff, left)):
		}
		backoff = min(2*backoff, 15*time.Second)
	}
}

// permanent says err is the service answering no, not the service missing: a wrong password,
// an unknown database or bucket owner, a key S3 does not know. Waiting does not mend those.
func permanent(err error) bool {
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		// 28: invalid authorization; 3D: invalid catalog name (no such database).
		return strings.HasPrefix(pg.Code, "28") || strings.HasPrefix(pg.Code, "3D")
	}
	var s3 minio.ErrorResponse
	if errors.As(err, &s3) {
		switch s3.Code {
		case "InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied":
			return true
		}
	}
	return false
}
