package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/trawlerdev/trawler/internal/crawl"
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
	RobotsTag    string // the X-Robots-Tag directives that apply to us (robots.Directives.String)
	Err          string // why the attempt failed, if it did
	Note         string // what else to remember as the URL's last error (not a failure)

	State       crawl.URLState
	SkipReason  string
	Attempts    int       // the URL's failed attempts so far
	NextFetchAt time.Time // when State is queued
	RecrawlS    int       // the URL's recrawl interval from now on, seconds (0: leave it)
	GoneCount   int       // consecutive 404/410 answers, this one included
}

// RecordFetch stores an outcome: the fetches row, the URL's new state, the host's counters
// and, for a dead URL, its dead letter with every attempt. It returns false when this attempt
// was already recorded (a retried activity), changing nothing.
func (agg Fetches) RecordFetch(ctx context.Context, host string, o FetchOutcome) (bool, error) {
	s := agg.s
	o = textOutcome(o)
	p := &groupedFetch{host: host, o: o}
	var err error
	if o.State != crawl.URLDead {
		err = recordFetches(ctx, s.pool, []*groupedFetch{p}) // the common case: one round trip
	} else {
		err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			if err := recordFetches(ctx, tx, []*groupedFetch{p}); err != nil || !p.recorded {
				return err
			}
			key := crawl.DeadLetterKey(o.FetchKey, o.CrawlID, o.Hash, o.Attempts)
			_, err := tx.Exec(ctx, `INSERT INTO dead_letters (crawl_id, url_hash, url, host, reason, attempts, dl_key)
				SELECT $1, $2, $3, $4, $5, coalesce(jsonb_agg(jsonb_build_object('at', fetched_at, 'status', status, 'error', error,
					'durationMs', duration_ms) ORDER BY fetched_at), '[]'), $6
				FROM fetches WHERE crawl_id = $1 AND url_hash = $2
				ON CONFLICT (dl_key) DO NOTHING`, o.CrawlID, o.Hash, o.URL, host, o.Err, key)
			if err != nil {
				return fmt.Errorf("dead-letter: %w", err)
			}
			return nil
		})
	}
	if err != nil {
		return false, fmt.Errorf("store: record fetch of %s: %w", o.URL, err)
	}
	return p.recorded, nil
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
func (agg Fetches) DeadLetters(ctx context.Context, crawlID string, limit int) ([]DeadLetter, error) {
	s := agg.s
	return s.Fetches().DeadLettersWhere(ctx, crawlID, DeadLetterFilter{}, limit)
}

// textOutcome makes o's texts storable (what the web sent may not be valid UTF-8) and caps
// the ones a server makes (crawl.Clip), whoever built the outcome: an error or a reason lands
// in fetches, urls, hosts and dead_letters (whose reason is indexed), a validator comes back in
// claims.
func textOutcome(o FetchOutcome) FetchOutcome {
	// (Text first: it may lengthen invalid bytes into U+FFFD, which the cap then counts.)
	o.URL, o.FinalURL = Text(o.URL), crawl.Clip(Text(o.FinalURL), crawl.MaxErrorBytes*8)
	o.ContentType = crawl.Clip(Text(o.ContentType), crawl.MaxFieldBytes)
	o.ETag, o.LastModified = crawl.Validator(Text(o.ETag)), crawl.Validator(Text(o.LastModified))
	o.Err, o.Note, o.SkipReason = crawl.ClipError(Text(o.Err)), crawl.ClipError(Text(o.Note)), crawl.ClipError(Text(o.SkipReason))
	return o
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
