package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// StoredPage is a URL's last stored capture (a 2xx with its body kept) and what processing
// read from it, as an export writes it.
type StoredPage struct {
	Hash                  []byte
	URL, FinalURL         string
	Status                int
	FetchedAt             time.Time
	ContentType           string
	ContentHash           []byte
	Title, Lang, TextKey  string
	DuplicateOf           string // the URL of the page this one duplicates ("": none)
	WARCFile              string
	WARCOffset, WARCBytes int64
	Links                 []string // the admitted targets of its links, sorted
	Extract               string   // what the crawl's extraction rules found, as JSON ("": nothing)
}

// storedPagesSQL reads a page of a crawl's stored pages in url_hash order after $2; $3 bounds
// their fetch time from below (NULL: no bound).
const storedPagesSQL = `SELECT u.url_hash, u.url, coalesce(f.final_url, ''), f.status, f.fetched_at, coalesce(f.content_type, ''),
		f.content_hash, coalesce(d.title, ''), coalesce(d.lang, ''), coalesce(d.text_key, ''), coalesce(du.url, ''),
		coalesce(f.w_file, ''), coalesce(f.w_offset, 0), coalesce(f.w_length, 0),
		coalesce((SELECT array_agg(t.url ORDER BY t.url) FROM unnest(d.link_to, d.link_kind) AS l(h, k)
			JOIN urls t ON t.crawl_id = d.crawl_id AND t.url_hash = l.h WHERE l.k <> 'embed'), '{}'),
		coalesce(d.extract::text, '')
	FROM urls u
	JOIN LATERAL (SELECT f.*, wp.warc_file AS w_file, wp.warc_offset AS w_offset, wp.warc_length AS w_length
		FROM fetches f LEFT JOIN warc_placements wp ON wp.fetch_id = f.id -- (in here: one probe a page, whatever the plan outside)
		WHERE f.crawl_id = u.crawl_id AND f.url_hash = u.url_hash AND f.body_key IS NOT NULL
		ORDER BY f.fetched_at DESC, f.id DESC LIMIT 1) f ON true
	LEFT JOIN documents d ON d.crawl_id = u.crawl_id AND d.url_hash = u.url_hash
	LEFT JOIN urls du ON du.crawl_id = d.crawl_id AND du.url_hash = d.dup_of
	WHERE u.crawl_id = $1 AND u.url_hash > $2 AND ($3::timestamptz IS NULL OR f.fetched_at >= $3)
		AND u.source <> 'embed' -- a page's requisites are archived with it, not pages of their own
	ORDER BY u.url_hash LIMIT $4`

// StoredPages returns up to limit of a crawl's stored pages after url hash after (nil: from the
// first), fetched at since or later (zero: any time): call again with the last hash for more.
func (agg Inspect) StoredPages(ctx context.Context, crawlID string, after []byte, since time.Time, limit int) ([]StoredPage, error) {
	s := agg.s
	if after == nil {
		after = []byte{}
	}
	var from *time.Time
	if !since.IsZero() {
		from = &since
	}
	rows, err := s.pool.Query(ctx, storedPagesSQL, crawlID, after, from, limit)
	if err != nil {
		return nil, fmt.Errorf("store: stored pages of %s: %w", crawlID, err)
	}
	pages, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (StoredPage, error) {
		var p StoredPage
		err := r.Scan(&p.Hash, &p.URL, &p.FinalURL, &p.Status, &p.FetchedAt, &p.ContentType, &p.ContentHash, &p.Title, &p.Lang,
			&p.TextKey, &p.DuplicateOf, &p.WARCFile, &p.WARCOffset, &p.WARCBytes, &p.Links, &p.Extract)
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: stored pages of %s: %w", crawlID, err)
	}
	return pages, nil
}

// CountStoredPages counts a crawl's URLs with a stored capture fetched at since or later.
func (agg Inspect) CountStoredPages(ctx context.Context, crawlID string, since time.Time) (int64, error) {
	s := agg.s
	var from *time.Time
	if !since.IsZero() {
		from = &since
	}
	var n int64
	err := s.pool.QueryRow(ctx, `SELECT count(DISTINCT url_hash) FROM fetches
		WHERE crawl_id = $1 AND body_key IS NOT NULL AND ($2::timestamptz IS NULL OR fetched_at >= $2)`, crawlID, from).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("store: count stored pages of %s: %w", crawlID, err)
	}
	return n, nil
}

// SeedURLs are a crawl's seed URLs, as a set.
func (agg Inspect) SeedURLs(ctx context.Context, crawlID string) (map[string]bool, error) {
	s := agg.s
	urls, err := s.strings(ctx, `SELECT url FROM urls WHERE crawl_id = $1 AND source = 'seed'`, crawlID)
	if err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(urls))
	for _, u := range urls {
		out[u] = true
	}
	return out, nil
}
