package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/trawlerdev/trawler/internal/crawl"
)

// compactCountsAt is how many delta rows of one crawl's counters a progress read lets pile up
// before it folds them into one row per key (each write statement adds one row per key it
// changed).
const compactCountsAt = 500

// oldestDueEvery is how often OldestDueS is measured: unlike the rest of the progress it needs
// a pass over the crawl's due-URL index (~75 ms for 300,000 queued URLs), and it is an alarm
// that moves in minutes anyway.
const oldestDueEvery = time.Minute

// heldShown is how many URLs of each held state a crawl's progress names (Waiting.Held).
const heldShown = 3

// CrawlProgress reads a crawl's progress in one round trip: its counters (kept by triggers as
// URLs, fetches, documents and hosts are written; see schema 0016), its rejections, and what
// its pending URLs wait on, from indexes. Whether anything is pending at all is read from the
// queue itself, not from the counters, so a crawl is never declared done, or kept running, on
// a count alone.
func (agg Crawls) CrawlProgress(ctx context.Context, id string) (crawl.CrawlProgress, error) {
	s := agg.s
	p := crawl.CrawlProgress{CrawlID: id, ByState: map[crawl.URLState]int{}, Skipped: map[string]int{}, Rejected: map[string]int{}, ErrorClass: map[string]int{}}
	due, measureDue := s.oldestDue.get(id)
	b := &pgx.Batch{}
	b.Queue(`SELECT state, admitted + requisites FROM crawls WHERE id = $1`, id).QueryRow(func(row pgx.Row) error {
		return row.Scan(&p.State, &p.Admitted)
	})
	deltas := 0
	b.Queue(`SELECT key, sum(n)::bigint, min(first_at), max(last_at), count(*) FROM crawl_counts WHERE crawl_id = $1 GROUP BY key`, id).
		Query(func(rows pgx.Rows) error {
			for rows.Next() {
				var key string
				var n int64
				var first, last *time.Time
				var k int
				if err := rows.Scan(&key, &n, &first, &last, &k); err != nil {
					return err
				}
				deltas += k
				addCount(&p, key, n, first, last)
			}
			return rows.Err()
		})
	b.Queue(`SELECT reason, count FROM crawl_rejections WHERE crawl_id = $1`, id).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var reason string
			var n int
			if err := rows.Scan(&reason, &n); err != nil {
				return err
			}
			p.Rejected[reason] = n
		}
		return rows.Err()
	})
	// Renders are few (opt-in, some hosts): counted from their partial index.
	b.Queue(`SELECT count(*) FROM renders WHERE crawl_id = $1 AND state = 'queued'`, id).
		QueryRow(func(row pgx.Row) error { return row.Scan(&p.Renders) })
	var pending bool
	// (One probe a state, each of its partial index: on a finished crawl each range is empty,
	// where one probe of the three states would read every URL of the crawl.)
	b.Queue(`SELECT EXISTS (SELECT 1 FROM urls WHERE crawl_id = $1 AND state = 'queued')
		OR EXISTS (SELECT 1 FROM urls WHERE crawl_id = $1 AND state = 'claimed')
		OR EXISTS (SELECT 1 FROM urls WHERE crawl_id = $1 AND state = 'fetched')`, id).
		QueryRow(func(row pgx.Row) error { return row.Scan(&pending) })
	// Claims in force are few (one chunk per host being fetched); the oldest page awaiting
	// processing is the first entry of urls_crawl_fetched.
	w := &crawl.Waiting{}
	p.Waiting = w
	b.Queue(`SELECT count(*) FILTER (WHERE claimed_until < now()), coalesce(extract(epoch FROM now() - min(updated_at)), 0)
		FROM urls WHERE crawl_id = $1 AND state = 'claimed'`, id).QueryRow(func(row pgx.Row) error {
		return row.Scan(&w.ExpiredClaims, &w.OldestClaimS)
	})
	// The few held longest of each state, by their indexes (urls_crawl_claimed, urls_crawl_fetched).
	// (URLs clipped: they are in every progress look the crawl workflow's history records)
	b.Queue(`SELECT left(url, 200), state, by, since FROM (
		(SELECT url, state, coalesce(claimed_by, '') AS by, extract(epoch FROM now() - updated_at) AS since FROM urls
			WHERE crawl_id = $1 AND state = 'claimed' ORDER BY updated_at LIMIT $2)
		UNION ALL (SELECT url, state, coalesce(processing_by, claimed_by, ''), extract(epoch FROM now() - updated_at) FROM urls
			WHERE crawl_id = $1 AND state = 'fetched' ORDER BY updated_at LIMIT $2)) x
		ORDER BY state = 'fetched', since DESC`, id, heldShown).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var h crawl.HeldURL
			if err := rows.Scan(&h.URL, &h.State, &h.By, &h.SinceS); err != nil {
				return err
			}
			w.Held = append(w.Held, h)
		}
		return rows.Err()
	})
	b.Queue(`SELECT coalesce(extract(epoch FROM now() - min(updated_at)), 0) FROM urls WHERE crawl_id = $1 AND state = 'fetched'`, id).
		QueryRow(func(row pgx.Row) error { return row.Scan(&w.OldestFetchS) })
	if measureDue {
		b.Queue(`SELECT coalesce(extract(epoch FROM now() - min(next_fetch_at)), 0) FROM urls
			WHERE crawl_id = $1 AND state = 'queued' AND next_fetch_at <= now()`, id).QueryRow(func(row pgx.Row) error {
			if err := row.Scan(&due); err != nil {
				return err
			}
			s.oldestDue.put(id, due)
			return nil
		})
	}
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return p, fmt.Errorf("store: crawl %s: %w", id, ErrNoCrawl)
		}
		return p, fmt.Errorf("store: progress %s: %w", id, err)
	}
	w.Unprocessed, w.OldestDueS = p.ByState[crawl.URLFetched], due
	if (p.Pending > 0) != pending {
		// The counters disagree with the queue (a write that bypassed the triggers, or a bug):
		// the queue decides, and the states are counted the slow way this once.
		slog.Warn("crawl counters disagree with the queue; counting by scan", "crawl", id, "countedPending", p.Pending, "pending", pending)
		scan, err := s.Inspect().ProgressByScan(ctx, id)
		if err != nil {
			return p, err
		}
		p.ByState, p.Skipped, p.Pending, p.Dead = scan.ByState, scan.Skipped, scan.Pending, scan.Dead
		w.Unprocessed = p.ByState[crawl.URLFetched]
	}
	p.Pending += p.Renders // a page waiting for its render may yet bring links
	if deltas > compactCountsAt {
		if err := s.compactCounts(ctx, id); err != nil {
			return p, err
		}
	}
	return p, nil
}

// addCount folds one counter into the progress.
func addCount(p *crawl.CrawlProgress, key string, n int64, first, last *time.Time) {
	switch {
	case strings.HasPrefix(key, "url:"):
		state := crawl.URLState(strings.TrimPrefix(key, "url:"))
		if n != 0 {
			p.ByState[state] = int(n)
		}
		switch state {
		case crawl.URLQueued, crawl.URLClaimed, crawl.URLFetched:
			p.Pending += n
		case crawl.URLDead:
			p.Dead += n
		}
	case strings.HasPrefix(key, "skip:"):
		if n != 0 {
			p.Skipped[strings.TrimPrefix(key, "skip:")] = int(n)
		}
	case key == "fetched":
		p.Fetched = n
	case key == "pages":
		p.Pages = n
	case key == "hosts":
		p.Hosts = n
	case key == "fetch:any":
		p.FirstFetch, p.LastFetch = first, last
	case key == "fetch:bytes":
		p.Bytes = n
	case key == "fetch:error":
		p.Errors = n
	case strings.HasPrefix(key, "fetch:"):
		if n != 0 {
			p.ErrorClass[strings.TrimPrefix(key, "fetch:")] = int(n)
		}
	}
}

// compactCounts folds a crawl's counter deltas into one row per key. One reader at a time
// (the advisory lock): a second would miss the rows the first is replacing. Deltas written
// meanwhile are not in the statement's snapshot and stay as they are.
func (s *Store) compactCounts(ctx context.Context, id string) error {
	_, err := s.pool.Exec(ctx, `WITH l AS (SELECT pg_try_advisory_xact_lock(hashtextextended('crawl_counts/' || $1, 0)) AS ok),
		d AS (DELETE FROM crawl_counts WHERE crawl_id = $1 AND (SELECT ok FROM l) RETURNING key, n, first_at, last_at)
		INSERT INTO crawl_counts (crawl_id, key, n, first_at, last_at)
		SELECT $1, key, sum(n), min(first_at), max(last_at) FROM d GROUP BY key`, id)
	if err != nil {
		return fmt.Errorf("store: compact counters of %s: %w", id, err)
	}
	return nil
}

// dueCache keeps each crawl's last OldestDueS for oldestDueEvery.
type dueCache struct {
	mu sync.Mutex
	m  map[string]dueAt
}

type dueAt struct {
	at  time.Time
	due float64
}

// get returns the cached value, and whether it is time to measure again.
func (c *dueCache) get(id string) (float64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d, ok := c.m[id]
	return d.due, !ok || time.Since(d.at) >= oldestDueEvery
}

func (c *dueCache) put(id string, due float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]dueAt{}
	}
	c.m[id] = dueAt{at: time.Now(), due: due}
}
