package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/minio/minio-go/v7"
)

func TestAwaitRetriesUntilTheServiceAnswers(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	down := errors.New("connection refused")
	calls := 0
	v, err := Await(context.Background(), log, "minio", time.Minute, func(context.Context) (int, error) {
		if calls++; calls < 3 {
			return 0, down
		}
		return 7, nil
	})
	if err != nil || v != 7 || calls != 3 {
		t.Fatalf("Await = %d, %v after %d calls; want 7 after 3", v, err, calls)
	}

	calls = 0
	_, err = Await(context.Background(), log, "minio", 0, func(context.Context) (int, error) { calls++; return 0, down })
	if !errors.Is(err, down) || calls != 1 {
		t.Fatalf("a zero wait: %v after %d calls; want the error after one", err, calls)
	}

	start := time.Now()
	_, err = Await(context.Background(), log, "minio", 1500*time.Millisecond, func(context.Context) (int, error) { return 0, down })
	if !errors.Is(err, down) || !strings.Contains(err.Error(), "not ready after") || time.Since(start) > 5*time.Second {
		t.Fatalf("a wait that runs out: %v after %v", err, time.Since(start))
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err = Await(ctx, log, "minio", time.Hour, func(context.Context) (int, error) { return 0, down }); !errors.Is(err, down) {
		t.Fatalf("a stopped wait: %v", err)
	}
}

// A wrong password or key is not waited for: waiting does not mend it.
func TestAwaitGivesUpAtOnceOnAWrongCredential(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, wrong := range []error{fmt.Errorf("connect: %w", &pgconn.PgError{Code: "28P01"}),
		fmt.Errorf("blob: check bucket: %w", minio.ErrorResponse{Code: "InvalidAccessKeyId"})} {
		calls := 0
		start := time.Now()
		_, err := Await(context.Background(), log, "x", time.Minute, func(context.Context) (int, error) { calls++; return 0, wrong })
		if err == nil || calls != 1 || time.Since(start) > time.Second {
			t.Errorf("%v: %d calls in %v", wrong, calls, time.Since(start))
		}
	}
}
