package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/trawlerdev/trawler/internal/crawl"
)

// RenderJob is a page to render: its capture, as a render worker needs it.
type RenderJob struct {
	CrawlID     string
	Hash        []byte
	FetchID     int64
	FetchKey    string
	URL         string // as fetched (its final URL when it was redirected)
	Host        string
	Depth       int
	BodyKey     string
	ContentType string
	RobotsTag   string // the capture's X-Robots-Tag directives for us
	Attempts    int
}

// RenderOutcome is what a render did.
type RenderOutcome struct {
	DOMKey   string
	DOMBytes int
	Requests int
	Blocked  int
	Links    int
	Err      string // the render failed (state failed once attempts run out)
	// LoadsKey references the WARC records of what the browser loaded through the worker
	// (request and response records, each a gzip member; "": none), and Loads says where each
	// response record lies in them.
	LoadsKey string
	Loads    []RenderLoad
}

// RenderLoad is one response the browser was given while it rendered a page, as its record
// lies in the render's stored records: enough for an index line.
type RenderLoad struct {
	URL    string    `json:"url"`
	At     time.Time `json:"at"`
	Status int       `json:"status"`
	Mime   string    `json:"mime"`
	Digest string    `json:"digest"`
	Offset int64     `json:"offset"`
	Length int64     `json:"length"`
	// Request says a request record precedes the response's (records count for the file).
	Request bool `json:"request,omitempty"`
}

// maxRenderAttempts is how often a page is tried before its render is given up.
const maxRenderAttempts = 3

// QueueRenders queues the latest captures of the given pages of a crawl for rendering (a
// page rendered from the same capture before is not queued again).
func (agg Renders) QueueRenders(ctx context.Context, crawlID string, hashes [][]byte) error {
	s := agg.s
	if len(hashes) == 0 {
		return nil
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO renders (crawl_id, url_hash, fetch_id)
		SELECT $1, t.h, f.id FROM unnest($2::bytea[]) AS t(h)
		JOIN LATERAL (SELECT id FROM fetches WHERE crawl_id = $1 AND url_hash = t.h AND body_key IS NOT NULL
			ORDER BY fetched_at DESC LIMIT 1) f ON true
		ON CONFLICT DO NOTHING`, crawlID, hashes)
	if err != nil {
		return fmt.Errorf("store: queue renders of %s: %w", crawlID, err)
	}
	return nil
}

// ClaimRenders claims up to limit queued renders of a crawl for owner, for hold, while the
// crawl runs (a paused or stopped crawl renders nothing more). A crawl runs one render run at
// a time, and each attempt of it claims as its own owner, so a claim of another owner had its
// worker die mid-page, whatever its hold says, and so does one that expired: it counted as an
// attempt, and a page whose claims died maxRenderAttempts times (a page that kills its worker)
// is failed for good here, not taken again — so a poison page ends, and its crawl with it.
func (agg Renders) ClaimRenders(ctx context.Context, crawlID, owner string, limit int, hold time.Duration) ([]RenderJob, error) {
	s := agg.s
	// One statement: the expired claims whose attempts are spent are given up, and the others
	// claimed (the two sets are disjoint, so no row is updated twice).
	rows, err := s.pool.Query(ctx, `WITH given_up AS (
			UPDATE renders SET state = 'failed', claimed_by = NULL, claimed_until = NULL,
				error = format('given up: its worker ended during each of its %s attempts', attempts)
			WHERE crawl_id = $1 AND state = 'queued' AND (claimed_until < now() OR claimed_by <> $2) AND attempts >= $5),
		picked AS (
			SELECT crawl_id, url_hash, fetch_id FROM renders
			WHERE crawl_id = $1 AND state = 'queued' AND (claimed_until IS NULL OR ((claimed_until < now() OR claimed_by <> $2) AND attempts < $5))
				AND EXISTS (SELECT 1 FROM crawls WHERE id = $1 AND state = 'running')
			ORDER BY created_at LIMIT $3 FOR UPDATE SKIP LOCKED),
		claimed AS (
			UPDATE renders r SET claimed_by = $2, claimed_until = now() + make_interval(secs => $4), attempts = r.attempts + 1
			FROM picked p WHERE r.crawl_id = p.crawl_id AND r.url_hash = p.url_hash AND r.fetch_id = p.fetch_id
			RETURNING r.crawl_id, r.url_hash, r.fetch_id, r.attempts)
		SELECT c.crawl_id, c.url_hash, c.fetch_id, f.fetch_key, coalesce(f.final_url, u.url), u.host, u.depth,
			f.body_key, coalesce(f.content_type, ''), coalesce(f.robots_tag, ''), c.attempts
		FROM claimed c JOIN fetches f ON f.id = c.fetch_id JOIN urls u ON u.crawl_id = c.crawl_id AND u.url_hash = c.url_hash`,
		crawlID, owner, limit, hold.Seconds(), maxRenderAttempts)
	if err != nil {
		return nil, fmt.Errorf("store: claim renders of %s: %w", crawlID, err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (RenderJob, error) {
		var j RenderJob
		err := r.Scan(&j.CrawlID, &j.Hash, &j.FetchID, &j.FetchKey, &j.URL, &j.Host, &j.Depth, &j.BodyKey, &j.ContentType, &j.RobotsTag, &j.Attempts)
		return j, err
	})
}

// FinishRender records a render's outcome. A failed render is tried again (another claim)
// until it has had maxRenderAttempts; then it is failed for good. Only owner's claim counts.
func (agg Renders) FinishRender(ctx context.Context, j RenderJob, owner string, o RenderOutcome) error {
	s := agg.s
	state := "done"
	if o.Err != "" {
		state = "queued"
		if j.Attempts >= maxRenderAttempts {
			state = "failed"
		}
	}
	_, err := s.pool.Exec(ctx, `UPDATE renders SET state = $5, claimed_by = NULL, claimed_until = NULL, rendered_at = now(),
			dom_key = nullif($6, ''), dom_bytes = $7, requests = $8, blocked = $9, links = $10, error = nullif($11, ''),
			loads_key = nullif($12, ''), loads = $13
		WHERE crawl_id = $1 AND url_hash = $2 AND fetch_id = $3 AND claimed_by = $4`,
		j.CrawlID, j.Hash, j.FetchID, owner, state, o.DOMKey, o.DOMBytes, o.Requests, o.Blocked, o.Links, crawl.ClipError(Text(o.Err)),
		o.LoadsKey, loadsJSON(o.Loads))
	if err != nil {
		return fmt.Errorf("store: finish render: %w", err)
	}
	return nil
}

// freeBrowserDeaths is how often a page's render may be given back uncounted because its
// browser died; after that each death counts as one of the page's attempts (the page may be
// what kills the browser).
const freeBrowserDeaths = 2

// ReleaseRender gives a claimed render back to the queue because the worker failed (its
// browser died), not counting the attempt the first freeBrowserDeaths times.
func (agg Renders) ReleaseRender(ctx context.Context, j RenderJob, owner string) error {
	s := agg.s
	_, err := s.pool.Exec(ctx, `UPDATE renders SET claimed_by = NULL, claimed_until = NULL, browser_deaths = browser_deaths + 1,
			attempts = CASE WHEN browser_deaths < $5 THEN greatest(attempts - 1, 0) ELSE attempts END,
			state = CASE WHEN browser_deaths >= $5 AND attempts >= $6 THEN 'failed' ELSE state END,
			error = CASE WHEN browser_deaths >= $5 AND attempts >= $6 THEN 'given up: its browser died during each of its attempts' ELSE error END
		WHERE crawl_id = $1 AND url_hash = $2 AND fetch_id = $3 AND claimed_by = $4 AND state = 'queued'`,
		j.CrawlID, j.Hash, j.FetchID, owner, freeBrowserDeaths, maxRenderAttempts)
	if err != nil {
		return fmt.Errorf("store: release render: %w", err)
	}
	return nil
}

// HostCrawlDelay is the Crawl-delay the host's robots.txt files set (the largest of its
// schemes'; 0: none).
func (agg Hosts) HostCrawlDelay(ctx context.Context, host string) (time.Duration, error) {
	s := agg.s
	var ms *int64
	err := s.pool.QueryRow(ctx, `SELECT crawl_delay_ms FROM hosts WHERE host = $1`, host).Scan(&ms)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return 0, fmt.Errorf("store: crawl delay of %s: %w", host, err)
	}
	if ms == nil {
		return 0, nil
	}
	return time.Duration(*ms) * time.Millisecond, nil
}

// RenderCapture is a finished render not yet in a WARC file: its DOM, and the capture it
// was made from (the record a conversion record refers to).
type RenderCapture struct {
	CrawlID    string
	Hash       []byte
	FetchID    int64
	FetchKey   string
	URL        string
	RenderedAt time.Time
	DOMKey     string
	LoadsKey   string       // what the browser loaded ("": nothing recorded)
	Loads      []RenderLoad // where each response lies in it
}

// loadsJSON is the loads column: NULL for none.
func loadsJSON(loads []RenderLoad) any {
	if len(loads) == 0 {
		return nil
	}
	return loads
}

// UnarchivedRenders lists up to limit finished renders of a crawl whose DOM is in no WARC file.
func (agg Archive) UnarchivedRenders(ctx context.Context, crawlID string, limit int) ([]RenderCapture, error) {
	s := agg.s
	rows, err := s.pool.Query(ctx, `SELECT r.crawl_id, r.url_hash, r.fetch_id, f.fetch_key, coalesce(f.final_url, u.url), r.rendered_at, r.dom_key,
			coalesce(r.loads_key, ''), r.loads
		FROM renders r JOIN fetches f ON f.id = r.fetch_id JOIN urls u ON u.crawl_id = r.crawl_id AND u.url_hash = r.url_hash
		WHERE r.crawl_id = $1 AND r.state = 'done' AND r.warc_file IS NULL AND r.dom_key IS NOT NULL
		ORDER BY r.rendered_at LIMIT $2`, crawlID, limit)
	if err != nil {
		return nil, fmt.Errorf("store: unarchived renders of %s: %w", crawlID, err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (RenderCapture, error) {
		var c RenderCapture
		err := r.Scan(&c.CrawlID, &c.Hash, &c.FetchID, &c.FetchKey, &c.URL, &c.RenderedAt, &c.DOMKey, &c.LoadsKey, &c.Loads)
		return c, err
	})
}

// RendersArchived marks renders as written into a WARC file.
func (agg Archive) RendersArchived(ctx context.Context, file string, rs []RenderCapture) error {
	s := agg.s
	if len(rs) == 0 {
		return nil
	}
	hashes, ids := make([][]byte, len(rs)), make([]int64, len(rs))
	for i, r := range rs {
		hashes[i], ids[i] = r.Hash, r.FetchID
	}
	_, err := s.pool.Exec(ctx, `UPDATE renders r SET warc_file = $2 FROM unnest($3::bytea[], $4::bigint[]) AS t(h, f)
		WHERE r.crawl_id = $1 AND r.url_hash = t.h AND r.fetch_id = t.f`, rs[0].CrawlID, file, hashes, ids)
	if err != nil {
		return fmt.Errorf("store: renders archived in %s: %w", file, err)
	}
	return nil
}
