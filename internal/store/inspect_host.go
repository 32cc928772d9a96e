package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// HostRecord is what is known about a host across crawls.
type HostRecord struct {
	Host         string         `json:"host"`
	Robots       []RobotsRecord `json:"robots"` // one per scheme fetched (RFC 9309 §2.3)
	CrawlDelayMs *int           `json:"crawlDelayMs,omitempty"`
	// Fetched, Errors and Bytes count the host's requests kept in Postgres (a crawl deleted
	// by retention takes its fetches along): those answered, those that failed, and the
	// bytes received. LastError is the latest failure's.
	Fetched       int64                     `json:"fetched"`
	Errors        int64                     `json:"errors"`
	Bytes         int64                     `json:"bytes"`
	LastError     string                    `json:"lastError,omitempty"`
	LastClaimAt   *time.Time                `json:"lastClaimAt,omitempty"`
	NextRequestAt *time.Time                `json:"nextRequestAt,omitempty"`
	RetiredAt     *time.Time                `json:"retiredAt,omitempty"`
	RetiredReason string                    `json:"retiredReason,omitempty"`
	Crawls        map[string]map[string]int `json:"crawls"` // crawl → URL state → count
	// KeptOut counts the host's URLs a robots signal kept out, by signal and directive:
	// "robots.txt" (not fetched), "x-robots-tag noindex", "meta nofollow"…
	KeptOut map[string]int `json:"keptOut"`
	// Recent are the host's latest fetches, newest first (each URL's last), at most
	// RecentFetches: what its running lease did, as recorded, between the lease's heartbeats
	// (which carry counts only).
	Recent []RecentFetch `json:"recent"`
}

// RecentFetches is how many of a host's latest fetches its record lists.
const RecentFetches = 20

// RecentFetch is one fetch of a host's record: its URL, when, and what came back.
type RecentFetch struct {
	URL       string    `json:"url"`
	FetchedAt time.Time `json:"fetchedAt"`
	Status    int       `json:"status,omitempty"` // 0: no answer
	MS        int       `json:"ms"`
	Bytes     int64     `json:"bytes,omitempty"`
	Error     string    `json:"error,omitempty"`
}

// RobotsRecord is what the cached robots.txt of one scheme of a host is.
type RobotsRecord struct {
	Scheme       string    `json:"scheme"`
	Status       int       `json:"status"` // 0: unreachable
	FetchedAt    time.Time `json:"fetchedAt"`
	ExpiresAt    time.Time `json:"expiresAt"`
	CrawlDelayMs *int      `json:"crawlDelayMs,omitempty"`
	Sitemaps     []string  `json:"sitemaps,omitempty"`
}

// HostRecordOf reads a host's record; ErrNoHost when no crawl has touched it.
func (agg Inspect) HostRecordOf(ctx context.Context, host string) (*HostRecord, error) {
	s := agg.s
	h := &HostRecord{Host: host, Crawls: map[string]map[string]int{}, KeptOut: map[string]int{}}
	var lastErr, retiredReason *string
	err := s.pool.QueryRow(ctx, `SELECT crawl_delay_ms, last_claim_at, next_request_at, retired_at, retired_reason
		FROM hosts WHERE host = $1`, host).Scan(&h.CrawlDelayMs, &h.LastClaimAt, &h.NextRequestAt, &h.RetiredAt, &retiredReason)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, ErrNoHost
	}
	if err != nil {
		return nil, fmt.Errorf("store: host: %w", err)
	}
	// The counters are the host's fetches summed now, not kept on its row: recording a
	// fetch then writes no row the scheduler books on (recordFetchesSQL).
	err = s.pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE f.error IS NULL), count(*) FILTER (WHERE f.error IS NOT NULL),
			coalesce(sum(f.bytes), 0), (array_agg(f.error ORDER BY f.fetched_at DESC, f.id DESC) FILTER (WHERE f.error IS NOT NULL))[1]
		FROM urls u JOIN fetches f ON f.crawl_id = u.crawl_id AND f.url_hash = u.url_hash
		WHERE u.host = $1`, host).Scan(&h.Fetched, &h.Errors, &h.Bytes, &lastErr)
	if err != nil {
		return nil, fmt.Errorf("store: host fetches: %w", err)
	}
	h.LastError, h.RetiredReason = deref(lastErr), deref(retiredReason)
	rrows, err := s.pool.Query(ctx, `SELECT scheme, status, fetched_at, expires_at, crawl_delay_ms, sitemaps
		FROM robots WHERE host = $1 ORDER BY scheme`, host)
	if err != nil {
		return nil, fmt.Errorf("store: host robots: %w", err)
	}
	if h.Robots, err = pgx.CollectRows(rrows, pgx.RowToStructByPos[RobotsRecord]); err != nil {
		return nil, fmt.Errorf("store: host robots: %w", err)
	}
	rows, err := s.pool.Query(ctx, `SELECT crawl_id, state, count(*) FROM urls WHERE host = $1 GROUP BY 1, 2`, host)
	if err != nil {
		return nil, fmt.Errorf("store: host urls: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var c, st string
		var n int
		if err := rows.Scan(&c, &st, &n); err != nil {
			return nil, err
		}
		if h.Crawls[c] == nil {
			h.Crawls[c] = map[string]int{}
		}
		h.Crawls[c][st] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: host urls: %w", err)
	}
	if h.Recent, err = s.recentFetches(ctx, host); err != nil {
		return nil, err
	}
	return h, s.keptOut(ctx, h)
}

// recentFetches reads a host's latest fetches: the last of each of its URLs fetched latest
// (urls.last_fetched_at, then fetches_url), newest first.
func (s *Store) recentFetches(ctx context.Context, host string) ([]RecentFetch, error) {
	rows, err := s.pool.Query(ctx, `SELECT u.url, f.fetched_at, coalesce(f.status, 0), coalesce(f.duration_ms, 0),
			coalesce(f.bytes, 0), coalesce(f.error, '')
		FROM (SELECT crawl_id, url_hash, url FROM urls WHERE host = $1 AND last_fetched_at IS NOT NULL
			ORDER BY last_fetched_at DESC LIMIT $2) u
		CROSS JOIN LATERAL (SELECT * FROM fetches f WHERE f.crawl_id = u.crawl_id AND f.url_hash = u.url_hash
			ORDER BY f.fetched_at DESC LIMIT 1) f
		ORDER BY f.fetched_at DESC`, host, RecentFetches)
	if err != nil {
		return nil, fmt.Errorf("store: host fetches: %w", err)
	}
	recent, err := pgx.CollectRows(rows, pgx.RowToStructByPos[RecentFetch])
	if err != nil {
		return nil, fmt.Errorf("store: host fetches: %w", err)
	}
	return recent, nil
}

// keptOut fills a host record's counts of URLs kept out by each robots signal.
func (s *Store) keptOut(ctx context.Context, h *HostRecord) error {
	rows, err := s.pool.Query(ctx, `SELECT 'robots.txt', count(*) FROM urls
			WHERE host = $1 AND state = 'skipped' AND skip_reason LIKE 'robots.txt%'
		UNION ALL
		SELECT d.robots_signal, count(*) FROM urls u JOIN documents d USING (crawl_id, url_hash)
			WHERE u.host = $1 AND d.robots_signal IS NOT NULL GROUP BY 1`, h.Host)
	if err != nil {
		return fmt.Errorf("store: host robots signals: %w", err)
	}
	counts, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (struct {
		signal string
		n      int
	}, error) {
		var c struct {
			signal string
			n      int
		}
		err := r.Scan(&c.signal, &c.n)
		return c, err
	})
	if err != nil {
		return fmt.Errorf("store: host robots signals: %w", err)
	}
	for _, c := range counts {
		if c.signal == "robots.txt" {
			if c.n > 0 {
				h.KeptOut["robots.txt"] += c.n
			}
			continue
		}
		// "x-robots-tag: noindex,nofollow; meta: nofollow" counts once under each source and
		// directive.
		for _, part := range strings.Split(c.signal, "; ") {
			source, list, _ := strings.Cut(part, ": ")
			for _, d := range strings.Split(list, ",") {
				h.KeptOut[source+" "+d] += c.n
			}
		}
	}
	return nil
}

// ErrNoHost says no crawl has touched a host.
var ErrNoHost = errors.New("no such host")
