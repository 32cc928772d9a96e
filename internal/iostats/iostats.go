// Package iostats counts a process's round trips to its stores — S3 requests and Postgres
// round trips — for its metrics endpoint and the benchmarks: the per-page cost budget is
// stated in them (DESIGN.md §5), so they are counted where they happen, not estimated.
package iostats

import (
	"context"
	"net/http"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
)

var s3Requests, pgRoundTrips atomic.Int64

// S3Requests is how many HTTP requests this process sent to S3 so far.
func S3Requests() int64 { return s3Requests.Load() }

// PostgresRoundTrips is how many queries, batches and copies this process sent to Postgres
// so far (a pipelined batch is one).
func PostgresRoundTrips() int64 { return pgRoundTrips.Load() }

// S3Transport counts the requests it carries.
type S3Transport struct{ Base http.RoundTripper }

// RoundTrip counts and forwards one request.
func (t *S3Transport) RoundTrip(r *http.Request) (*http.Response, error) {
	s3Requests.Add(1)
	return t.Base.RoundTrip(r)
}

// PGTracer counts Postgres round trips (set as pgx's ConnConfig.Tracer).
type PGTracer struct{}

// TraceQueryStart counts a query (BEGIN and COMMIT included).
func (PGTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	pgRoundTrips.Add(1)
	return ctx
}

// TraceQueryEnd does nothing.
func (PGTracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// TraceBatchStart counts a batch: its queries travel together.
func (PGTracer) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	pgRoundTrips.Add(1)
	return ctx
}

// TraceBatchQuery does nothing.
func (PGTracer) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}

// TraceBatchEnd does nothing.
func (PGTracer) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// TraceCopyFromStart counts a COPY.
func (PGTracer) TraceCopyFromStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceCopyFromStartData) context.Context {
	pgRoundTrips.Add(1)
	return ctx
}

// TraceCopyFromEnd does nothing.
func (PGTracer) TraceCopyFromEnd(context.Context, *pgx.Conn, pgx.TraceCopyFromEndData) {}
