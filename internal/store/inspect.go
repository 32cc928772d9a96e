package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/trawlerdev/trawler/internal/crawl"
)

// CrawlStats reads a crawl's progress with what an operator asks of it besides: duplicates,
// robots refusals and throughput (a scan of its documents and fetches each).
func (agg Inspect) CrawlStats(ctx context.Context, id string, now time.Time) (crawl.CrawlProgress, error) {
	s := agg.s
	p, err := s.Crawls().CrawlProgress(ctx, id)
	if err != nil {
		return p, err
	}
	p.RobotsBlocked = int64(p.Skipped["robots.txt"] + p.Skipped["robots.txt unreachable"])
	var lastMinute, peak int64
	err = s.pool.QueryRow(ctx, `SELECT
			(SELECT count(*) FROM documents WHERE crawl_id = $1 AND dup_of IS NOT NULL),
			(SELECT count(*) FROM documents WHERE crawl_id = $1 AND dup_kind IN ('simhash', 'minhash')),
			(SELECT count(*) FROM fetches WHERE crawl_id = $1 AND fetched_at > $2::timestamptz - interval '1 minute'),
			(SELECT coalesce(max(n), 0) FROM (SELECT count(*) AS n FROM fetches WHERE crawl_id = $1
				GROUP BY date_trunc('minute', fetched_at)) m)`, id, now).Scan(&p.Duplicates, &p.NearDuplicates, &lastMinute, &peak)
	if err != nil {
		return p, fmt.Errorf("store: stats of %s: %w", id, err)
	}
	p.Throughput = &crawl.Throughput{Now: float64(lastMinute) / 60, Peak: float64(peak) / 60, Avg: p.AvgPagesPerSec()}
	p.PagesPerSec = p.Throughput.Avg
	return p, nil
}

// CrawlIDs lists crawls, newest first.
func (agg Inspect) CrawlIDs(ctx context.Context) ([]string, error) {
	s := agg.s
	rows, err := s.pool.Query(ctx, `SELECT id FROM crawls ORDER BY created_at DESC LIMIT 1000`)
	if err != nil {
		return nil, fmt.Errorf("store: crawls: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// URLRecord is one URL of a crawl as the frontier holds it.
type URLRecord struct {
	CrawlID       string         `json:"crawl"`
	URL           string         `json:"url"`
	Host          string         `json:"host"`
	State         crawl.URLState `json:"state"`
	SkipReason    string         `json:"skipReason,omitempty"`
	Source        crawl.Source   `json:"source"`
	Depth         int            `json:"depth"`
	Priority      float32        `json:"priority"`
	Attempts      int            `json:"attempts"`
	FetchCount    int            `json:"fetchCount"`
	NextFetchAt   *time.Time     `json:"nextFetchAt,omitempty"`
	LastStatus    *int           `json:"lastStatus,omitempty"`
	LastError     string         `json:"lastError,omitempty"`
	RecrawlS      *int           `json:"recrawlIntervalSeconds,omitempty"`
	ChangeCount   int            `json:"changes"`
	UnchangedSeen int            `json:"unchanged"`
	// KeptOutBy names the signal that kept the URL, or its text or links, out: robots.txt (not
	// fetched), x-robots-tag or meta (fetched, noindex or nofollow).
	KeptOutBy string        `json:"keptOutBy,omitempty"`
	Fetches   []FetchRecord `json:"fetches"`
	Document  *DocRecord    `json:"document,omitempty"`
	InLinks   []string      `json:"inLinks"`
	// InLinksCut says the search for in-links ran out of its time (inLinksBudget) before it
	// read every document of the crawl: InLinks is then empty, not the URL's in-links.
	InLinksCut bool     `json:"inLinksCut,omitempty"`
	OutLinks   []string `json:"outLinks"`
}

// FetchRecord is one fetch attempt.
type FetchRecord struct {
	At          time.Time `json:"at"`
	Status      *int      `json:"status,omitempty"`
	DurationMs  *int      `json:"durationMs,omitempty"`
	Bytes       *int64    `json:"bytes,omitempty"`
	ContentType string    `json:"contentType,omitempty"`
	Error       string    `json:"error,omitempty"`
	RobotsTag   string    `json:"robotsTag,omitempty"` // X-Robots-Tag directives that applied to us
	WARCFile    string    `json:"warcFile,omitempty"`
}

// DocRecord is a URL's stored document and its duplicate verdict.
type DocRecord struct {
	Title     string `json:"title,omitempty"`
	Lang      string `json:"lang,omitempty"`
	Charset   string `json:"charset,omitempty"`
	Size      int64  `json:"size"`
	TextBytes *int   `json:"textBytes,omitempty"`
	BodyKey   string `json:"bodyKey"`
	TextKey   string `json:"textKey,omitempty"`
	Canonical string `json:"canonical,omitempty"`
	NoIndex   bool   `json:"noindex,omitempty"`
	NoFollow  bool   `json:"nofollow,omitempty"`
	// RobotsSignal names the signals behind NoIndex/NoFollow: "x-robots-tag: noindex; meta: nofollow".
	RobotsSignal string    `json:"robotsSignal,omitempty"`
	DupOf        string    `json:"duplicateOf,omitempty"` // the URL it duplicates
	DupKind      string    `json:"duplicateKind,omitempty"`
	DupScore     *float64  `json:"duplicateScore,omitempty"`
	ProcessedAt  time.Time `json:"processedAt"`
}

// keptOutBy names the signal that kept a URL (robots.txt) or its text or links (a header or a
// meta element) out.
func keptOutBy(r *URLRecord) string {
	switch {
	case r.State == crawl.URLSkipped && strings.HasPrefix(r.SkipReason, "robots.txt"):
		return "robots.txt"
	case r.Document != nil && r.Document.RobotsSignal != "":
		var by []string
		for _, part := range strings.Split(r.Document.RobotsSignal, "; ") {
			name, _, _ := strings.Cut(part, ":")
			by = append(by, name)
		}
		return strings.Join(by, ", ")
	}
	return ""
}

// maxListedLinks caps the in- and out-links a URL record lists.
const maxListedLinks = 100

// URLRecordOf reads everything known about one URL of a crawl; ErrNoURL when it is unknown.
func (agg Inspect) URLRecordOf(ctx context.Context, crawlID string, hash []byte) (*URLRecord, error) {
	s := agg.s
	r := &URLRecord{CrawlID: crawlID, Fetches: []FetchRecord{}, InLinks: []string{}, OutLinks: []string{}}
	var skip, lastErr *string
	err := s.pool.QueryRow(ctx, `SELECT url, host, state, skip_reason, source, depth, priority, attempts, fetch_count,
			CASE WHEN state = 'queued' THEN next_fetch_at END, last_status, last_error, recrawl_s, change_count, unchanged_count
		FROM urls WHERE crawl_id = $1 AND url_hash = $2`, crawlID, hash).Scan(&r.URL, &r.Host, &r.State, &skip, &r.Source,
		&r.Depth, &r.Priority, &r.Attempts, &r.FetchCount, &r.NextFetchAt, &r.LastStatus, &lastErr, &r.RecrawlS,
		&r.ChangeCount, &r.UnchangedSeen)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, ErrNoURL
	}
	if err != nil {
		return nil, fmt.Errorf("store: url: %w", err)
	}
	r.SkipReason, r.LastError = deref(skip), deref(lastErr)
	rows, err := s.pool.Query(ctx, `SELECT fetched_at, status, duration_ms, bytes, coalesce(content_type, ''), coalesce(error, ''),
			coalesce(robots_tag, ''), coalesce(p.warc_file, '') FROM fetches f LEFT JOIN warc_placements p ON p.fetch_id = f.id
			WHERE f.crawl_id = $1 AND f.url_hash = $2 ORDER BY f.fetched_at`, crawlID, hash)
	if err != nil {
		return nil, fmt.Errorf("store: url fetches: %w", err)
	}
	if r.Fetches, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (FetchRecord, error) {
		var f FetchRecord
		err := row.Scan(&f.At, &f.Status, &f.DurationMs, &f.Bytes, &f.ContentType, &f.Error, &f.RobotsTag, &f.WARCFile)
		return f, err
	}); err != nil {
		return nil, fmt.Errorf("store: url fetches: %w", err)
	}
	d := &DocRecord{}
	var textKey, title, lang, charset, canonical, dupOf, dupKind, signal *string
	err = s.pool.QueryRow(ctx, `SELECT d.title, d.lang, d.charset, d.size, d.text_bytes, d.body_key, d.text_key, d.canonical,
			o.url, d.dup_kind, d.dup_score, d.processed_at, d.noindex, d.nofollow, d.robots_signal
		FROM documents d LEFT JOIN urls o ON o.crawl_id = d.crawl_id AND o.url_hash = d.dup_of
		WHERE d.crawl_id = $1 AND d.url_hash = $2`, crawlID, hash).Scan(&title, &lang, &charset, &d.Size, &d.TextBytes,
		&d.BodyKey, &textKey, &canonical, &dupOf, &dupKind, &d.DupScore, &d.ProcessedAt,
		&d.NoIndex, &d.NoFollow, &signal)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
	case err != nil:
		return nil, fmt.Errorf("store: url document: %w", err)
	default:
		d.Title, d.Lang, d.Charset, d.TextKey, d.Canonical = deref(title), deref(lang), deref(charset), deref(textKey), deref(canonical)
		d.DupOf, d.DupKind, d.RobotsSignal = deref(dupOf), deref(dupKind), deref(signal)
		r.Document = d
	}
	r.KeptOutBy = keptOutBy(r)
	if r.InLinks, r.InLinksCut, err = s.inLinksOf(ctx, crawlID, hash); err != nil {
		return nil, err
	}
	rows, err = s.pool.Query(ctx, `SELECT u.url FROM documents d CROSS JOIN unnest(d.link_to, d.link_kind) AS l(h, k)
			JOIN urls u ON u.crawl_id = d.crawl_id AND u.url_hash = l.h
			WHERE d.crawl_id = $1 AND d.url_hash = $2 AND l.k <> 'embed' ORDER BY u.url LIMIT $3`, crawlID, hash, maxListedLinks)
	if err != nil {
		return nil, fmt.Errorf("store: url out-links: %w", err)
	}
	if r.OutLinks, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
		return nil, fmt.Errorf("store: url out-links: %w", err)
	}
	return r, nil
}

// inLinksBudget bounds the URL view's search for a URL's in-links (a variable: tests shorten
// it).
var inLinksBudget = 5 * time.Second

// inLinksOf lists up to maxListedLinks pages of a crawl that link to the URL hash, not as a
// requisite, by reading the crawl's documents' out-links, for at most inLinksBudget (cut is
// then true and the list empty). No index serves it: a GIN index of every document's targets
// cost each saved page about 1 KB of WAL and half the buffers of its document's save (schema
// 0047), for a view an operator opens now and then; the read costs about half a microsecond a
// document of 15 links (about 50 ms for 100,000 of them), more for pages of many links.
func (s *Store) inLinksOf(ctx context.Context, crawlID string, hash []byte) (links []string, cut bool, err error) {
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT set_config('statement_timeout', $1, true)`,
			fmt.Sprintf("%dms", max(inLinksBudget.Milliseconds(), 1))); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT u.url FROM documents d JOIN urls u ON u.crawl_id = d.crawl_id AND u.url_hash = d.url_hash
			WHERE d.crawl_id = $1 AND $2::bytea = ANY(d.link_to)
				AND EXISTS (SELECT FROM unnest(d.link_to, d.link_kind) AS l(h, k) WHERE l.h = $2 AND l.k <> 'embed')
			ORDER BY u.url LIMIT $3`, crawlID, hash, maxListedLinks)
		if err != nil {
			return err
		}
		links, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	var pg *pgconn.PgError
	// query_canceled: the budget ran out, unless the caller gave up (a cancelled context is
	// also answered 57014).
	if errors.As(err, &pg) && pg.Code == "57014" {
		if ctx.Err() != nil {
			return nil, false, fmt.Errorf("store: url in-links: %w", ctx.Err())
		}
		return []string{}, true, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("store: url in-links: %w", err)
	}
	return links, false, nil
}

// ErrNoURL says a crawl has no such URL.
var ErrNoURL = errors.New("no such URL in the crawl")

// CrawlsOfURL lists the crawls that know a URL.
func (agg Inspect) CrawlsOfURL(ctx context.Context, hash []byte) ([]string, error) {
	s := agg.s
	rows, err := s.pool.Query(ctx, `SELECT crawl_id FROM urls WHERE url_hash = $1 ORDER BY crawl_id`, hash)
	if err != nil {
		return nil, fmt.Errorf("store: crawls of url: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

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

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
