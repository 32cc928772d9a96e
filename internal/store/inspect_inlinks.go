package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

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
