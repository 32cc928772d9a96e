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
