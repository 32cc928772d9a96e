package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Count is a number of things of one kind (a status, a type, a host, a reason).
type Count struct {
	Key string `json:"key"`
	N   int64  `json:"n"`
}

// TimePoint is what a crawl fetched in one bucket of time.
type TimePoint struct {
	At     time.Time `json:"at"`
	Pages  int64     `json:"pages"`  // answered 2xx or 3xx
	Errors int64     `json:"errors"` // 4xx, 5xx or no answer
}

// HostPace is how a host's requests were spaced: their number and the gaps between starts.
type HostPace struct {
	Host        string  `json:"host"`
	Requests    int64   `json:"requests"`
	Errors      int64   `json:"errors"`
	MinGapMS    float64 `json:"minGapMs"`
	MedianGapMS float64 `json:"medianGapMs"`
	MaxGapMS    float64 `json:"maxGapMs"` // the longest wait between two of its requests
}

// Seed is a seed URL and what became of it.
type Seed struct {
	URL    string `json:"url"`
	State  string `json:"state"`
	Status int    `json:"status"`
}

// CrawlFigures are the figures of a crawl's report, read from its own tables.
type CrawlFigures struct {
	Crawl         string          `json:"crawl"`
	State         string          `json:"state"`
	Spec          json.RawMessage `json:"-"` // as recorded: may hold secrets (headers, proxy), never shown whole
	Created       time.Time       `json:"created"`
	Finished      *time.Time      `json:"finished,omitempty"`
	First, Last   *time.Time      `json:"-"`
	Requests      int64           `json:"requests"`
	Pages         int64           `json:"pages"`  // 2xx answers
	Errors        int64           `json:"errors"` // 4xx, 5xx or no answer
	Bytes         int64           `json:"bytes"`
	BucketSeconds int             `json:"bucketSeconds"`
	Timeline      []TimePoint     `json:"timeline"`
	Statuses      []Count         `json:"statuses"`
	Types         []Count         `json:"types"`
	Depths        []Count         `json:"depths"`
	TopHosts      []Count         `json:"topHosts"`
	ErrorHosts    []Count         `json:"errorHosts"`
	Politeness    []HostPace      `json:"politeness"`
	Skips         []Count         `json:"skips"`
	Rejections    []Count         `json:"rejections"`
	Duplicates    []Count         `json:"duplicates"`
	Requisites    []Count         `json:"requisites"` // pages' requisites by state (and skip reason)
	Fidelity      []PageFidelity  `json:"fidelity"`   // sampled pages' replay fidelity (trawler qa), the worst first
	// Extracted counts documents per extraction rule that matched ("rule") and per field that
	// came back with a value ("rule.field"; the result's own keys, _truncated and _failed, left out).
	Extracted []Count `json:"extracted"`
	// Deliveries are the crawl's outputs' standings (spec.outputs).
	Deliveries []DeliveryStatus `json:"deliveries"`
	Seeds      []Seed           `json:"seeds"`
}

// reportTop bounds the hosts a report lists.
const reportTop = 20

// CrawlFigures reads a crawl's report figures: one batch for the crawl and its span, then one
// for the rest (the timeline's buckets depend on the span).
func (agg Inspect) CrawlFigures(ctx context.Context, crawlID string) (*CrawlFigures, error) {
	s := agg.s
	f := &CrawlFigures{Crawl: crawlID}
	err := s.pool.QueryRow(ctx, `SELECT c.state, c.spec, c.created_at, c.finished_at, x.first, x.last, x.requests, x.pages, x.errors, x.bytes
		FROM crawls c, LATERAL (SELECT min(fetched_at) first, max(fetched_at) last, count(*) requests,
			count(*) FILTER (WHERE status BETWEEN 200 AND 299) pages, count(*) FILTER (WHERE status IS NULL OR status >= 400) errors,
			coalesce(sum(bytes), 0) bytes FROM fetches WHERE crawl_id = c.id) x
		WHERE c.id = $1`, crawlID).Scan(&f.State, &f.Spec, &f.Created, &f.Finished, &f.First, &f.Last, &f.Requests, &f.Pages, &f.Errors, &f.Bytes)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("store: report of %s: %w", crawlID, ErrNoCrawl)
	}
	if err != nil {
		return nil, fmt.Errorf("store: report of %s: %w", crawlID, err)
	}
	// About 120 points over the crawl's span, a second each at least.
	f.BucketSeconds = 1
	if f.First != nil && f.Last != nil {
		f.BucketSeconds = max(1, int(f.Last.Sub(*f.First).Seconds()/120)+1)
	}
	counts := func(dst *[]Count) func(pgx.Rows) error {
		return func(rows pgx.Rows) error {
			var err error
			*dst, err = pgx.CollectRows(rows, pgx.RowToStructByPos[Count])
			return err
		}
	}
	b := &pgx.Batch{}
	b.Queue(`SELECT to_timestamp(floor(extract(epoch FROM fetched_at) / $2) * $2) AS b,
			count(*) FILTER (WHERE status BETWEEN 200 AND 399), count(*) FILTER (WHERE status IS NULL OR status >= 400)
		FROM fetches WHERE crawl_id = $1 GROUP BY b ORDER BY b`, crawlID, f.BucketSeconds).Query(func(rows pgx.Rows) error {
		var err error
		f.Timeline, err = pgx.CollectRows(rows, pgx.RowToStructByPos[TimePoint])
		return err
	})
	b.Queue(`SELECT coalesce(status::text, 'no answer'), count(*) FROM fetches WHERE crawl_id = $1 GROUP BY 1 ORDER BY 2 DESC, 1`, crawlID).Query(counts(&f.Statuses))
	b.Queue(`SELECT coalesce(nullif(lower(trim(split_part(content_type, ';', 1))), ''), 'unknown'), count(*) FROM fetches
		WHERE crawl_id = $1 AND body_key IS NOT NULL GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 12`, crawlID).Query(counts(&f.Types))
	b.Queue(`SELECT depth::text, count(*) FROM urls WHERE crawl_id = $1 GROUP BY depth ORDER BY depth`, crawlID).Query(counts(&f.Depths))
	b.Queue(`SELECT u.host, count(*) FROM fetches f JOIN urls u ON u.crawl_id = f.crawl_id AND u.url_hash = f.url_hash
		WHERE f.crawl_id = $1 AND f.status BETWEEN 200 AND 299 GROUP BY u.host ORDER BY 2 DESC, 1 LIMIT $2`, crawlID, reportTop).Query(counts(&f.TopHosts))
	b.Queue(`SELECT u.host, count(*) FROM fetches f JOIN urls u ON u.crawl_id = f.crawl_id AND u.url_hash = f.url_hash
		WHERE f.crawl_id = $1 AND (f.status IS NULL OR f.status >= 400) GROUP BY u.host ORDER BY 2 DESC, 1 LIMIT $2`, crawlID, reportTop).Query(counts(&f.ErrorHosts))
	b.Queue(`WITH r AS (
			SELECT u.host, f.status, f.fetched_at - lag(f.fetched_at) OVER (PARTITION BY u.host ORDER BY f.fetched_at) AS gap
			FROM fetches f JOIN urls u ON u.crawl_id = f.crawl_id AND u.url_hash = f.url_hash WHERE f.crawl_id = $1)
		SELECT host, count(*), count(*) FILTER (WHERE status IS NULL OR status >= 400),
			coalesce(extract(epoch FROM min(gap)) * 1000, 0)::float8,
			coalesce(extract(epoch FROM percentile_cont(0.5) WITHIN GROUP (ORDER BY gap)) * 1000, 0)::float8,
			coalesce(extract(epoch FROM max(gap)) * 1000, 0)::float8
		FROM r GROUP BY host ORDER BY 2 DESC, 1 LIMIT $2`, crawlID, reportTop).Query(func(rows pgx.Rows) error {
		var err error
		f.Politeness, err = pgx.CollectRows(rows, pgx.RowToStructByPos[HostPace])
		return err
	})
	b.Queue(`SELECT coalesce(skip_reason, 'unknown'), count(*) FROM urls WHERE crawl_id = $1 AND state = 'skipped' GROUP BY 1 ORDER BY 2 DESC, 1`, crawlID).Query(counts(&f.Skips))
	b.Queue(`SELECT reason, count FROM crawl_rejections WHERE crawl_id = $1 AND count > 0 ORDER BY 2 DESC, 1`, crawlID).Query(counts(&f.Rejections))
	b.Queue(`SELECT coalesce(dup_kind, 'original'), count(*) FROM documents WHERE crawl_id = $1 GROUP BY 1 ORDER BY 2 DESC, 1`, crawlID).Query(counts(&f.Duplicates))
	b.Queue(`SELECT CASE WHEN state = 'skipped' THEN 'skipped: ' || coalesce(skip_reason, 'unknown')
			WHEN state = 'done' AND last_status BETWEEN 200 AND 299 THEN 'archived' ELSE state || coalesce(' (' || last_status || ')', '') END, count(*)
		FROM urls WHERE crawl_id = $1 AND source = 'embed' GROUP BY 1 ORDER BY 2 DESC, 1`, crawlID).Query(counts(&f.Requisites))
	b.Queue(`SELECT r.key, count(*) FROM documents d, jsonb_each(d.extract) r WHERE d.crawl_id = $1 AND d.extract IS NOT NULL GROUP BY 1
		UNION ALL
		SELECT r.key || '.' || f, count(*) FROM documents d, jsonb_each(d.extract) r, jsonb_object_keys(r.value) f
			WHERE d.crawl_id = $1 AND d.extract IS NOT NULL AND left(f, 1) <> '_' GROUP BY 1
		ORDER BY 1`, crawlID).Query(counts(&f.Extracted))
	b.Queue(fidelitySQL, crawlID).Query(func(rows pgx.Rows) error {
		var err error
		f.Fidelity, err = pgx.CollectRows(rows, scanFidelity)
		return err
	})
	b.Queue(`SELECT url, state, coalesce(last_status, 0) FROM urls WHERE crawl_id = $1 AND source = 'seed' ORDER BY url LIMIT 500`, crawlID).Query(func(rows pgx.Rows) error {
		var err error
		f.Seeds, err = pgx.CollectRows(rows, pgx.RowToStructByPos[Seed])
		return err
	})
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return nil, fmt.Errorf("store: report of %s: %w", crawlID, err)
	}
	if f.Deliveries, err = s.Deliveries().Statuses(ctx, crawlID); err != nil {
		return nil, err
	}
	return f, nil
}
