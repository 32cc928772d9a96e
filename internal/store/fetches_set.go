package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// recordFetchesSQL records outcomes, one or a group, in one statement: the fetches rows of
// those that made a request (a fetch key), then — for each whose row is new, or that made no
// request — the URL's new state (a new fetch is free for any processing to claim). A host's
// counters are not kept here: its record sums its fetches when asked (HostRecordOf), so the
// host's row stays the scheduler's alone and no booking waits for a group's commit. A retried
// attempt of a request changes nothing. Each statement on urls and fetches also runs the
// progress counters' triggers once (schema 0016), so a group of n outcomes costs three writes
// and their triggers, not n of each. It returns,
// in the group's order, whether each outcome was recorded now. The group must not name a
// fetch key or a URL twice (distinctRuns). A new body is filed under its digest in the crawl's
// payloads (the first capture of those bytes in the crawl stays the one a revisit refers to).
// A new fetch with an HTTP answer waits for the archiver in warc_pending (schema 0046's
// trigger, which every writer of fetches passes through).
const recordFetchesSQL = `WITH t AS (
		SELECT * FROM unnest($1::text[], $2::bytea[], $3::text[], $4::timestamptz[], $5::int[], $6::bigint[], $7::bigint[],
			$8::bool[], $9::text[], $10::bytea[], $11::text[], $12::text[], $13::text[], $14::bytea[], $15::bytea[], $16::bool[],
			$17::text[], $18::text[], $19::int[], $20::timestamptz[], $21::text[], $22::text[], $23::text[], $24::int[],
			$25::int[], $26::text[], $27::text[])
			WITH ORDINALITY AS t(crawl_id, url_hash, fetch_key, fetched_at, status, duration_ms, bytes, truncated, content_type,
				content_hash, body_key, final_url, error, request_head, response_head, changed, state, skip_reason, attempts,
				next_fetch_at, last_error, etag, last_modified, recrawl_s, gone_count, robots_tag, url, ord)),
	f AS (
		INSERT INTO fetches (crawl_id, url_hash, fetch_key, fetched_at, status, duration_ms,
			bytes, truncated, content_type, content_hash, body_key, final_url, error, request_head, response_head, changed, robots_tag)
		SELECT crawl_id, url_hash, fetch_key, fetched_at, nullif(status, 0), duration_ms, bytes, truncated, nullif(content_type, ''),
			content_hash, nullif(body_key, ''), nullif(final_url, ''), nullif(error, ''),
			nullif(request_head, ''::bytea), nullif(response_head, ''::bytea), changed, nullif(robots_tag, '')
		FROM t WHERE fetch_key <> '' ORDER BY ord
		ON CONFLICT (fetch_key) DO NOTHING
		RETURNING fetch_key),
	rec AS (SELECT t.*, t.fetch_key = '' OR EXISTS (SELECT 1 FROM f WHERE f.fetch_key = t.fetch_key) AS ok,
			EXISTS (SELECT 1 FROM f WHERE f.fetch_key = t.fetch_key) AS fetched_now
		FROM t),
	u AS (
		UPDATE urls SET state = r.state, skip_reason = nullif(r.skip_reason, ''), attempts = r.attempts, next_fetch_at = r.next_fetch_at,
			claimed_until = NULL, processing_until = NULL, fetch_count = urls.fetch_count + CASE WHEN r.fetch_key <> '' THEN 1 ELSE 0 END,
			last_status = coalesce(nullif(r.status, 0), urls.last_status),
			last_fetched_at = CASE WHEN r.fetch_key <> '' THEN r.fetched_at ELSE urls.last_fetched_at END,
			last_error = nullif(r.last_error, ''),
			etag = CASE WHEN r.status BETWEEN 200 AND 299 THEN nullif(r.etag, '') ELSE urls.etag END,
			last_modified = CASE WHEN r.status BETWEEN 200 AND 299 THEN nullif(r.last_modified, '') ELSE urls.last_modified END,
			content_hash = coalesce(r.content_hash, urls.content_hash), body_key = coalesce(nullif(r.body_key, ''), urls.body_key), recrawl_s = coalesce(nullif(r.recrawl_s, 0), urls.recrawl_s),
			gone_count = CASE WHEN r.status = 0 THEN urls.gone_count ELSE r.gone_count END,
			change_count = urls.change_count + CASE WHEN r.changed THEN 1 ELSE 0 END,
			unchanged_count = urls.unchanged_count + CASE WHEN NOT r.changed THEN 1 ELSE 0 END, updated_at = now()
		FROM rec r
		WHERE urls.crawl_id = r.crawl_id AND urls.url_hash = r.url_hash AND urls.state IN ('claimed', 'queued') AND r.ok),
	p AS (
		INSERT INTO payloads (content_hash, crawl_id, owner_crawl, body_key, url, fetched_at)
		SELECT DISTINCT ON (content_hash, crawl_id) content_hash, crawl_id, crawl_id, body_key, url, fetched_at
		FROM rec WHERE fetched_now AND body_key <> '' AND content_hash IS NOT NULL
		ORDER BY content_hash, crawl_id, ord
		ON CONFLICT (content_hash, crawl_id) DO NOTHING)
	SELECT ok FROM rec ORDER BY ord`

// querier is a pool or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// execer is a pool or a transaction, for a statement whose rows are not read.
type execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// recordFetches records a group of outcomes (already through textOutcome) with
// recordFetchesSQL on q, setting each one's recorded.
func recordFetches(ctx context.Context, q querier, batch []*groupedFetch) error {
	n := len(batch)
	var (
		crawls, keys, types, bodies, finals, errs, states, skips, lastErrs, etags, lastMods, tags = make([]string, n),
			make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n),
			make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		hashes, contentHashes, reqHeads, respHeads = make([][]byte, n), make([][]byte, n), make([][]byte, n), make([][]byte, n)
		at, nexts                                  = make([]time.Time, n), make([]time.Time, n)
		status, attempts, recrawl, gone            = make([]int32, n), make([]int32, n), make([]int32, n), make([]int32, n)
		durations, sizes                           = make([]int64, n), make([]int64, n)
		truncated                                  = make([]bool, n)
		urls                                       = make([]string, n)
		changed                                    = make([]*bool, n)
	)
	for i, p := range batch {
		o := p.o
		next, lastErr := outcomeDerived(o)
		crawls[i], hashes[i], keys[i], at[i] = o.CrawlID, o.Hash, o.FetchKey, o.FetchedAt
		status[i], durations[i], sizes[i], truncated[i] = int32(o.Status), o.Duration.Milliseconds(), o.Bytes, o.Truncated
		types[i], contentHashes[i], bodies[i], finals[i], errs[i] = o.ContentType, o.ContentHash, o.BodyKey, o.FinalURL, o.Err
		reqHeads[i], respHeads[i], changed[i] = []byte(o.RequestHead), []byte(o.ResponseHead), o.Changed
		states[i], skips[i], attempts[i], nexts[i], lastErrs[i] = string(o.State), o.SkipReason, int32(o.Attempts), next, lastErr
		etags[i], lastMods[i], recrawl[i], gone[i] = o.ETag, o.LastModified, int32(o.RecrawlS), int32(o.GoneCount)
		tags[i], urls[i] = o.RobotsTag, o.URL
	}
	rows, err := q.Query(ctx, recordFetchesSQL, crawls, hashes, keys, at, status, durations, sizes, truncated, types,
		contentHashes, bodies, finals, errs, reqHeads, respHeads, changed, states, skips, attempts, nexts, lastErrs, etags,
		lastMods, recrawl, gone, tags, urls)
	if err != nil {
		return fmt.Errorf("store: record %d fetches: %w", n, err)
	}
	defer rows.Close()
	i := 0
	for rows.Next() {
		if i >= n {
			return fmt.Errorf("store: record %d fetches: more answers than outcomes", n)
		}
		if err := rows.Scan(&batch[i].recorded); err != nil {
			return fmt.Errorf("store: record %d fetches: %w", n, err)
		}
		i++
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: record %d fetches: %w", n, err)
	}
	if i != n {
		return fmt.Errorf("store: record %d fetches: %d answers", n, i)
	}
	return nil
}

// distinctRuns cuts batch into runs, in order, in which no fetch key and no URL comes twice:
// one statement cannot insert a fetch key twice or update a row twice.
func distinctRuns(batch []*groupedFetch) [][]*groupedFetch {
	var runs [][]*groupedFetch
	keys, urls := map[string]bool{}, map[string]bool{}
	from := 0
	for i, p := range batch {
		u := p.o.CrawlID + "\x00" + string(p.o.Hash)
		if urls[u] || (p.o.FetchKey != "" && keys[p.o.FetchKey]) {
			runs = append(runs, batch[from:i])
			from = i
			clear(keys)
			clear(urls)
		}
		urls[u], keys[p.o.FetchKey] = true, true
	}
	return append(runs, batch[from:])
}

// outcomeDerived is what recording o writes besides its fields: the URL's next fetch (now
// when none is set) and the URL's last error (the failure, or else the note).
func outcomeDerived(o FetchOutcome) (next time.Time, lastErr string) {
	next = o.NextFetchAt
	if next.IsZero() {
		next = time.Now()
	}
	return next, firstNonEmpty(o.Err, o.Note)
}
