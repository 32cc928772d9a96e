package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// recordFetchSQL records an outcome in one statement: the fetches row when a request was made
// ($3, the fetch key, not empty), then — when that row is new, or there was no request — the
// URL's new state (a new fetch is free for any processing to claim), and the host's counters
// for a request. A retried attempt of a request changes nothing. It says whether the outcome
// was recorded now.
const recordFetchSQL = `WITH f AS (
		INSERT INTO fetches (crawl_id, url_hash, fetch_key, fetched_at, status, duration_ms,
			bytes, truncated, content_type, content_hash, body_key, final_url, error, request_head, response_head, changed)
		SELECT $1, $2, $3, $4, nullif($5, 0), $6, $7, $8, nullif($9, ''), $10, nullif($11, ''), nullif($12, ''), nullif($13, ''),
			nullif($14::bytea, ''::bytea), nullif($15::bytea, ''::bytea), $16
		WHERE $3 <> ''
		ON CONFLICT (fetch_key) DO NOTHING
		RETURNING 1),
	rec AS (SELECT $3 = '' OR EXISTS (SELECT 1 FROM f) AS ok),
	u AS (
		UPDATE urls SET state = $17, skip_reason = nullif($18, ''), attempts = $19, next_fetch_at = $20,
			claimed_until = NULL, processing_until = NULL, fetch_count = fetch_count + CASE WHEN $3 <> '' THEN 1 ELSE 0 END,
			last_status = coalesce(nullif($5, 0), last_status), last_fetched_at = CASE WHEN $3 <> '' THEN $4 ELSE last_fetched_at END,
			last_error = nullif($21, ''),
			etag = CASE WHEN $5 BETWEEN 200 AND 299 THEN nullif($22, '') ELSE etag END,
			last_modified = CASE WHEN $5 BETWEEN 200 AND 299 THEN nullif($23, '') ELSE last_modified END,
			content_hash = coalesce($10, content_hash), recrawl_s = coalesce(nullif($24, 0), recrawl_s),
			gone_count = CASE WHEN $5 = 0 THEN gone_count ELSE $25 END,
			change_count = change_count + CASE WHEN $16 THEN 1 ELSE 0 END,
			unchanged_count = unchanged_count + CASE WHEN NOT $16 THEN 1 ELSE 0 END, updated_at = now()
		WHERE crawl_id = $1 AND url_hash = $2 AND state IN ('claimed', 'queued') AND (SELECT ok FROM rec)),
	h AS (
		INSERT INTO hosts AS h (host, fetched, errors, bytes, last_error)
		SELECT $26, 1 - $27, $27, $7, nullif($13, '') WHERE EXISTS (SELECT 1 FROM f)
		ON CONFLICT (host) DO UPDATE SET fetched = h.fetched + 1 - $27, errors = h.errors + $27,
			bytes = h.bytes + $7, last_error = coalesce(nullif($13, ''), h.last_error), updated_at = now())
	SELECT ok FROM rec`

// queryRower is a pool or a transaction.
type queryRower interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// recordFetch runs recordFetchSQL for o on q.
func recordFetch(ctx context.Context, q queryRower, host string, o FetchOutcome) (bool, error) {
	var recorded bool
	err := q.QueryRow(ctx, recordFetchSQL, recordFetchArgs(host, o)...).Scan(&recorded)
	if err != nil {
		return false, fmt.Errorf("record: %w", err)
	}
	return recorded, nil
}

// queueRecordFetch queues recordFetchSQL for o in b.
func queueRecordFetch(b *pgx.Batch, host string, o FetchOutcome) {
	b.Queue(recordFetchSQL, recordFetchArgs(host, o)...)
}

// recordFetchArgs are recordFetchSQL's arguments for o.
func recordFetchArgs(host string, o FetchOutcome) []any {
	next, failed, lastErr := outcomeDerived(o)
	return []any{o.CrawlID, o.Hash, o.FetchKey, o.FetchedAt, o.Status, o.Duration.Milliseconds(), o.Bytes, o.Truncated,
		o.ContentType, o.ContentHash, o.BodyKey, o.FinalURL, o.Err, []byte(o.RequestHead), []byte(o.ResponseHead), o.Changed,
		o.State, o.SkipReason, o.Attempts, next, lastErr, o.ETag, o.LastModified, o.RecrawlS, o.GoneCount,
		host, failed}
}

// outcomeDerived is what recording o writes besides its fields: the URL's next fetch (now
// when none is set), 1 for a failed attempt (the host's error counter), and the URL's last
// error (the failure, or else the note).
func outcomeDerived(o FetchOutcome) (next time.Time, failed int, lastErr string) {
	next = o.NextFetchAt
	if next.IsZero() {
		next = time.Now()
	}
	if o.Err != "" {
		failed = 1
	}
	return next, failed, firstNonEmpty(o.Err, o.Note)
}
