package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/trawlerdev/trawler/internal/crawl"
)

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
