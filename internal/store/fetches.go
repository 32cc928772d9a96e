package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// URL states after a fetch attempt.
const (
	StateQueued  = "queued"  // retry later (NextFetchAt)
	StateClaimed = "claimed" // leased by a host workflow's batch
	StateFetched = "fetched" // stored; HTML awaiting processing
	StateDone    = "done"    // nothing more to do
	StateSkipped = "skipped" // not fetched, for SkipReason
	StateDead    = "dead"    // failed for good: dead-lettered
)

// FetchOutcome is what happened to one claimed URL and what becomes of it.
type FetchOutcome struct {
	CrawlID string
	Hash    []byte
	URL     string
	// FetchKey identifies this attempt; a retried activity reuses it, so the fetch is recorded
	// (and counted) once. Empty when no request was sent (a skip).
	FetchKey     string
	FetchedAt    time.Time
	Status       int
	Duration     time.Duration
	Bytes        int64
	Truncated    bool
	ContentType  string
	ContentHash  []byte
	BodyKey      string
	FinalURL     string
	ETag         string
	LastModified string
	RequestHead  string // request line and headers as sent (for WARC)
	ResponseHead string // status line and headers as received
	Changed      *bool  // a recrawl found the content changed (nil: nothing to compare)
	Err          string // why the attempt failed, if it did
	Note         string // what else to remember as the URL's last error (not a failure)

	State       string
	SkipReason  string
	Attempts    int       // the URL's failed attempts so far
	NextFetchAt time.Time // when State is queued
	RecrawlS    int       // the URL's recrawl interval from now on, seconds (0: leave it)
	GoneCount   int       // consecutive 404/410 answers, this one included
}

// RecordFetch stores an outcome: the fetches row, the URL's new state, the host's counters
// and, for a dead URL, its dead letter with every attempt. It returns false when this attempt
// was already recorded (a retried activity), changing nothing.
func (s *Store) RecordFetch(ctx context.Context, host string, o FetchOutcome) (bool, error) {
	recorded := true
	o.URL, o.ContentType, o.FinalURL, o.ETag, o.LastModified = Text(o.URL), Text(o.ContentType), Text(o.FinalURL), Text(o.ETag), Text(o.LastModified)
	o.Err, o.Note, o.SkipReason = Text(o.Err), Text(o.Note), Text(o.SkipReason)
	if o.FetchKey != "" && o.State != StateDead {
		return s.recordFetchOnce(ctx, host, o)
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if o.FetchKey != "" {
			var errText *string
			if o.Err != "" {
				errText = &o.Err
			}
			tag, err := tx.Exec(ctx, `INSERT INTO fetches (crawl_id, url_hash, fetch_key, fetched_at, status, duration_ms,
					bytes, truncated, content_type, content_hash, body_key, final_url, error, request_head, response_head, changed)
				VALUES ($1, $2, $3, $4, nullif($5, 0), $6, $7, $8, nullif($9, ''), $10, nullif($11, ''), nullif($12, ''), $13,
					nullif($14::bytea, ''::bytea), nullif($15::bytea, ''::bytea), $16)
				ON CONFLICT (fetch_key) DO NOTHING`,
				o.CrawlID, o.Hash, o.FetchKey, o.FetchedAt, o.Status, o.Duration.Milliseconds(), o.Bytes, o.Truncated,
				o.ContentType, o.ContentHash, o.BodyKey, o.FinalURL, errText, []byte(o.RequestHead), []byte(o.ResponseHead), o.Changed)
			if err != nil {
				return fmt.Errorf("insert fetch: %w", err)
			}
			if tag.RowsAffected() == 0 {
				recorded = false
				return nil
			}
		}
		requested := 0
		if o.FetchKey != "" {
			requested = 1
		}
		next := o.NextFetchAt
		if next.IsZero() {
			next = time.Now()
		}
		_, err := tx.Exec(ctx, `UPDATE urls SET state = $3, skip_reason = nullif($4, ''), attempts = $5, next_fetch_at = $6,
				claimed_until = NULL, fetch_count = fetch_count + $7,
				last_status = coalesce(nullif($8, 0), last_status), last_fetched_at = CASE WHEN $7 = 1 THEN $9 ELSE last_fetched_at END,
				last_error = nullif($10, ''),
				etag = CASE WHEN $8 BETWEEN 200 AND 299 THEN nullif($11, '') ELSE etag END,
				last_modified = CASE WHEN $8 BETWEEN 200 AND 299 THEN nullif($12, '') ELSE last_modified END,
				content_hash = coalesce($13, content_hash), recrawl_s = coalesce(nullif($14, 0), recrawl_s),
				gone_count = CASE WHEN $8 = 0 THEN gone_count ELSE $15 END,
				change_count = change_count + CASE WHEN $16 THEN 1 ELSE 0 END,
				unchanged_count = unchanged_count + CASE WHEN NOT $16 THEN 1 ELSE 0 END, updated_at = now()
			WHERE crawl_id = $1 AND url_hash = $2 AND state IN ('claimed', 'queued')`,
			o.CrawlID, o.Hash, o.State, o.SkipReason, o.Attempts, next, requested, o.Status, o.FetchedAt, firstNonEmpty(o.Err, o.Note),
			o.ETag, o.LastModified, o.ContentHash, o.RecrawlS, o.GoneCount, o.Changed)
		if err != nil {
			return fmt.Errorf("update url: %w", err)
		}
		if o.State == StateDead {
			key := o.FetchKey
			if key == "" {
				key = fmt.Sprintf("%s/%x/%d", o.CrawlID, o.Hash, o.Attempts)
			}
			_, err := tx.Exec(ctx, `INSERT INTO dead_letters (crawl_id, url_hash, url, host, reason, attempts, dl_key)
				SELECT $1, $2, $3, $4, $5, coalesce(jsonb_agg(jsonb_build_object('at', fetched_at, 'status', status, 'error', error,
					'durationMs', duration_ms) ORDER BY fetched_at), '[]'), $6
				FROM fetches WHERE crawl_id = $1 AND url_hash = $2
				ON CONFLICT (dl_key) DO NOTHING`, o.CrawlID, o.Hash, o.URL, host, o.Err, key)
			if err != nil {
				return fmt.Errorf("dead-letter: %w", err)
			}
		}
		if requested == 1 {
			failed := 0
			if o.Err != "" {
				failed = 1
			}
			_, err := tx.Exec(ctx, `INSERT INTO hosts (host, fetched, errors, bytes, last_error) VALUES ($1, 1 - $2, $2, $3, nullif($4, ''))
				ON CONFLICT (host) DO UPDATE SET fetched = hosts.fetched + 1 - $2, errors = hosts.errors + $2,
					bytes = hosts.bytes + $3, last_error = coalesce(nullif($4, ''), hosts.last_error), updated_at = now()`,
				host, failed, o.Bytes, o.Err)
			if err != nil {
				return fmt.Errorf("count on host: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("store: record fetch of %s: %w", o.URL, err)
	}
	return recorded, nil
}

// DeadLetter is one dead-lettered URL.
type DeadLetter struct {
	ID       int64     `json:"id"`
	CrawlID  string    `json:"crawlId"`
	URL      string    `json:"url"`
	Host     string    `json:"host"`
	Reason   string    `json:"reason"`
	Attempts []byte    `json:"attempts"`
	Created  time.Time `json:"created"`
}

// DeadLetters lists a crawl's dead letters (not yet replayed), newest first.
func (s *Store) DeadLetters(ctx context.Context, crawlID string, limit int) ([]DeadLetter, error) {
	return s.DeadLettersWhere(ctx, crawlID, DeadLetterFilter{}, limit)
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
