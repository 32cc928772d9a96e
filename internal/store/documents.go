package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Document is a processed page.
type Document struct {
	CrawlID     string
	Hash        []byte
	ContentHash []byte
	BodyKey     string
	TextKey     string
	Title       string
	Lang        string
	Charset     string
	ContentType string
	Size        int64
	Canonical   string
	NoIndex     bool
	NoFollow    bool
	LinksOut    int
	RecrawlAt   *time.Time // nil: the URL is done; else it is queued again for then
}

// Link is an edge of the web graph.
type Link struct {
	From, To []byte
	NoFollow bool
}

// SaveDocument stores a processed page, marks its exact duplicate (the first document of the
// crawl with the same content hash), records its out-links and moves the URL to done. Running
// it twice for the same page changes nothing the second time.
func (s *Store) SaveDocument(ctx context.Context, d Document, links []Link) (dupOf []byte, err error) {
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO documents (crawl_id, url_hash, content_hash, body_key, text_key, title, lang, charset,
				content_type, size, canonical, noindex, nofollow, links_out)
			VALUES ($1, $2, $3, $4, nullif($5, ''), $6, nullif($7, ''), nullif($8, ''), $9, $10, nullif($11, ''), $12, $13, $14)
			ON CONFLICT (crawl_id, url_hash) DO UPDATE SET content_hash = excluded.content_hash, body_key = excluded.body_key,
				text_key = excluded.text_key, title = excluded.title, lang = excluded.lang, charset = excluded.charset,
				content_type = excluded.content_type, size = excluded.size, canonical = excluded.canonical,
				noindex = excluded.noindex, nofollow = excluded.nofollow, links_out = excluded.links_out, processed_at = now()`,
			d.CrawlID, d.Hash, d.ContentHash, d.BodyKey, d.TextKey, d.Title, d.Lang, d.Charset, d.ContentType, d.Size,
			d.Canonical, d.NoIndex, d.NoFollow, d.LinksOut)
		if err != nil {
			return fmt.Errorf("save document: %w", err)
		}
		err = tx.QueryRow(ctx, `SELECT url_hash FROM documents WHERE crawl_id = $1 AND content_hash = $2
			ORDER BY processed_at, url_hash LIMIT 1`, d.CrawlID, d.ContentHash).Scan(&dupOf)
		if err != nil {
			return fmt.Errorf("find duplicate: %w", err)
		}
		if string(dupOf) == string(d.Hash) {
			dupOf = nil
		}
		if _, err := tx.Exec(ctx, `UPDATE documents SET dup_of = $3, dup_kind = CASE WHEN $3::bytea IS NULL THEN NULL ELSE 'exact' END
			WHERE crawl_id = $1 AND url_hash = $2`, d.CrawlID, d.Hash, dupOf); err != nil {
			return fmt.Errorf("mark duplicate: %w", err)
		}
		if len(links) > 0 {
			to, nf := make([][]byte, len(links)), make([]bool, len(links))
			for i, l := range links {
				to[i], nf[i] = l.To, l.NoFollow
			}
			if _, err := tx.Exec(ctx, `INSERT INTO links (crawl_id, from_hash, to_hash, nofollow)
				SELECT $1, $2, t, n FROM unnest($3::bytea[], $4::bool[]) AS x(t, n) ON CONFLICT DO NOTHING`,
				d.CrawlID, d.Hash, to, nf); err != nil {
				return fmt.Errorf("save links: %w", err)
			}
		}
		_, err = tx.Exec(ctx, `UPDATE urls SET state = CASE WHEN $3::timestamptz IS NULL THEN 'done' ELSE 'queued' END,
				next_fetch_at = coalesce($3, next_fetch_at), updated_at = now()
			WHERE crawl_id = $1 AND url_hash = $2 AND state = 'fetched'`, d.CrawlID, d.Hash, d.RecrawlAt)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: document %x: %w", d.Hash, err)
	}
	return dupOf, nil
}

// MarkDone moves a fetched URL that needs no processing (or could not be processed) to done.
func (s *Store) MarkDone(ctx context.Context, crawlID string, hash []byte, reason string) error {
	_, err := s.pool.Exec(ctx, `UPDATE urls SET state = 'done', last_error = coalesce(nullif($3, ''), last_error), updated_at = now()
		WHERE crawl_id = $1 AND url_hash = $2 AND state = 'fetched'`, crawlID, hash, reason)
	if err != nil {
		return fmt.Errorf("store: mark done: %w", err)
	}
	return nil
}

// FetchedPage is a fetched HTML page whose processing has not finished.
type FetchedPage struct {
	CrawlID, URL, FinalURL, BodyKey, ContentType, Host string
	Hash, ContentHash                                  []byte
	Depth                                              int
	Size                                               int64
}

// FetchedOf returns those of the given URLs that are fetched and await processing.
func (s *Store) FetchedOf(ctx context.Context, crawlIDs []string, hashes [][]byte) ([]FetchedPage, error) {
	rows, err := s.pool.Query(ctx, `SELECT u.crawl_id, u.url_hash, u.url, u.host, u.depth, coalesce(f.final_url, ''), f.body_key,
			coalesce(f.content_type, ''), f.content_hash, coalesce(f.bytes, 0)
		FROM unnest($1::text[], $2::bytea[]) AS k(c, h)
		JOIN urls u ON u.crawl_id = k.c AND u.url_hash = k.h AND u.state = 'fetched'
		JOIN LATERAL (SELECT final_url, body_key, content_type, content_hash, bytes FROM fetches
			WHERE crawl_id = u.crawl_id AND url_hash = u.url_hash AND body_key IS NOT NULL
			ORDER BY fetched_at DESC LIMIT 1) f ON true`, crawlIDs, hashes)
	if err != nil {
		return nil, fmt.Errorf("store: fetched pages: %w", err)
	}
	return pgx.CollectRows(rows, scanFetchedPage)
}

func scanFetchedPage(r pgx.CollectableRow) (FetchedPage, error) {
	var p FetchedPage
	err := r.Scan(&p.CrawlID, &p.Hash, &p.URL, &p.Host, &p.Depth, &p.FinalURL, &p.BodyKey, &p.ContentType, &p.ContentHash, &p.Size)
	return p, err
}

// StaleFetched returns up to limit pages of a crawl fetched before `before` and still not
// processed (their processing workflow failed for good or was lost), touching them so a
// sweep hands each out once per period.
func (s *Store) StaleFetched(ctx context.Context, crawlID string, before time.Time, limit int) ([]FetchedPage, error) {
	rows, err := s.pool.Query(ctx, `WITH stale AS (
			SELECT crawl_id, url_hash FROM urls WHERE crawl_id = $1 AND state = 'fetched' AND updated_at < $2
			LIMIT $3 FOR UPDATE SKIP LOCKED),
		touched AS (
			UPDATE urls u SET updated_at = now() FROM stale WHERE u.crawl_id = stale.crawl_id AND u.url_hash = stale.url_hash
			RETURNING u.crawl_id, u.url_hash, u.url, u.host, u.depth)
		SELECT t.crawl_id, t.url_hash, t.url, t.host, t.depth, coalesce(f.final_url, ''), f.body_key,
			coalesce(f.content_type, ''), f.content_hash, coalesce(f.bytes, 0)
		FROM touched t JOIN LATERAL (SELECT final_url, body_key, content_type, content_hash, bytes FROM fetches
			WHERE crawl_id = t.crawl_id AND url_hash = t.url_hash AND body_key IS NOT NULL
			ORDER BY fetched_at DESC LIMIT 1) f ON true`, crawlID, before, limit)
	if err != nil {
		return nil, fmt.Errorf("store: stale fetched pages: %w", err)
	}
	return pgx.CollectRows(rows, scanFetchedPage)
}
