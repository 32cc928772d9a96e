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

// crawlTables are the tables holding a crawl's rows, children before parents: deleting them in
// this order never waits on a cascade, and each count is the table's own. crawl_counts comes
// after urls and fetches, whose triggers keep it.
var crawlTables = []string{"dedup_keys", "documents", "renders", "warc_placements", "warc_pending", "fetches", "dead_letters", "payloads", "fidelity",
	"delivery_queue", "delivery_dead_letters", "deliveries", "cookie_jars", "crawl_rejections", "crawl_hosts", "warc_files", "urls", "crawl_counts", "crawls"}

// crawlRowsWhere selects a crawl's ($1) rows of table t. The near-duplicate index names no
// crawl (schema 0045): a crawl's keys are those its documents filed, mixed with the crawl. A
// WARC placement names only its fetch (schema 0046).
func crawlRowsWhere(t string) string {
	switch t {
	case "crawls":
		return `id = $1`
	case "warc_placements":
		return `fetch_id IN (SELECT id FROM fetches WHERE crawl_id = $1)`
	case "dedup_keys":
		return `(key, url_hash) IN (SELECT ` + nearKeySQL("d.crawl_id", "x") + `, d.url_hash
			FROM documents d CROSS JOIN unnest(d.dedup_keys) x WHERE d.crawl_id = $1)`
	}
	return `crawl_id = $1`
}

// ErrCrawlLive is returned for a crawl that is still running or paused.
var ErrCrawlLive = errors.New("the crawl is running or paused: stop it first")

// CrawlRows counts a crawl's rows in each table that holds them (zero counts left out).
func (agg Deletes) CrawlRows(ctx context.Context, crawlID string) (map[string]int64, error) {
	s := agg.s
	b := &pgx.Batch{}
	for _, t := range crawlTables {
		b.Queue(`SELECT count(*) FROM `+t+` WHERE `+crawlRowsWhere(t), crawlID)
	}
	br := s.pool.SendBatch(ctx, b)
	defer br.Close()
	out := map[string]int64{}
	for _, t := range crawlTables {
		var n int64
		if err := br.QueryRow().Scan(&n); err != nil {
			return nil, fmt.Errorf("store: count %s rows of %s: %w", t, crawlID, err)
		}
		if n > 0 {
			out[t] = n
		}
	}
	return out, br.Close()
}

const (
	sharedBodiesSQL = `SELECT DISTINCT body_key FROM payloads WHERE owner_crawl = $1 AND crawl_id <> $1`
	// orphanedBodiesSQL: borrowed from a deleted owner, and no crawl but this one points there.
	orphanedBodiesSQL = `SELECT DISTINCT p.body_key FROM payloads p
		WHERE p.crawl_id = $1 AND p.owner_crawl <> $1 AND NOT EXISTS (SELECT 1 FROM crawls c WHERE c.id = p.owner_crawl)
		AND NOT EXISTS (SELECT 1 FROM payloads o WHERE o.owner_crawl = p.owner_crawl AND o.crawl_id <> $1
			AND regexp_replace(o.body_key, '#[0-9]+\+[0-9]+$', '') = regexp_replace(p.body_key, '#[0-9]+\+[0-9]+$', ''))`
)

// SharedBodies are the body references of a crawl's segments that other crawls point at
// (through spec.dedupAgainst): their segments stay when the crawl is deleted.
func (agg Deletes) SharedBodies(ctx context.Context, crawlID string) ([]string, error) {
	s := agg.s
	return s.strings(ctx, sharedBodiesSQL, crawlID)
}

// OrphanedBodies are the body references a crawl borrowed from crawls already deleted that no
// other crawl points at: once the crawl goes, nothing holds them.
func (agg Deletes) OrphanedBodies(ctx context.Context, crawlID string) ([]string, error) {
	s := agg.s
	return s.strings(ctx, orphanedBodiesSQL, crawlID)
}

// LegacyRefs counts a crawl's stored items kept outside its own prefixes — segments written
// before segments were per crawl, which other crawls' items share: a delete leaves them.
func (agg Deletes) LegacyRefs(ctx context.Context, crawlID string, prefixes []string) (int64, error) {
	s := agg.s
	var n int64
	err := s.pool.QueryRow(ctx, `SELECT
			(SELECT count(*) FROM fetches WHERE crawl_id = $1 AND body_key IS NOT NULL AND NOT body_key LIKE ANY($2)
				AND NOT EXISTS (SELECT 1 FROM payloads p WHERE p.crawl_id = $1 AND p.body_key = fetches.body_key AND p.owner_crawl <> $1))
			+ (SELECT count(*) FROM documents WHERE crawl_id = $1 AND text_key IS NOT NULL AND NOT text_key LIKE ANY($2))
			+ (SELECT count(*) FROM renders WHERE crawl_id = $1 AND dom_key IS NOT NULL AND NOT dom_key LIKE ANY($2))`,
		crawlID, likePrefixes(prefixes)).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("store: legacy references of %s: %w", crawlID, err)
	}
	return n, nil
}

// ReleaseCrawl is a delete's first step, in one transaction under the payload lock held
// exclusively: it refuses a running or paused crawl, notes for deletion the segments the crawl
// borrowed from crawls deleted before that no other crawl points at (object_deletes), drops the
// crawl's payload rows and marks it deleting. After it, no fetch can be pointed at the crawl's
// bytes but the ones other crawls already point at, which it returns (their segments stay).
// The lock is held for these few statements only, not for the bulk of the delete.
func (agg Deletes) ReleaseCrawl(ctx context.Context, crawlID string) (shared []string, err error) {
	s := agg.s
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, payloadLock); err != nil {
			return err
		}
		var state string
		switch err := tx.QueryRow(ctx, `SELECT state FROM crawls WHERE id = $1 FOR UPDATE`, crawlID).Scan(&state); {
		case errors.Is(err, pgx.ErrNoRows): // deleted before, or never: what is left goes
		case err != nil:
			return err
		case state == string(crawl.CrawlRunning) || state == string(crawl.CrawlPaused):
			return ErrCrawlLive
		}
		orphaned, err := collectStrings(ctx, tx, orphanedBodiesSQL, crawlID)
		if err != nil {
			return err
		}
		keys := make([]string, 0, len(orphaned))
		for _, ref := range orphaned {
			keys = append(keys, segmentOf(ref))
		}
		if _, err := tx.Exec(ctx, `INSERT INTO object_deletes (key, crawl_id) SELECT DISTINCT k, $2 FROM unnest($1::text[]) k
			ON CONFLICT (key) DO NOTHING`, keys, crawlID); err != nil {
			return err
		}
		if shared, err = collectStrings(ctx, tx, sharedBodiesSQL, crawlID); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM payloads WHERE crawl_id = $1`, crawlID); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE crawls SET state = $2, updated_at = now() WHERE id = $1`, crawlID, string(crawl.CrawlDeleting))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: delete crawl %s: %w", crawlID, err)
	}
	return shared, nil
}

// DeleteCrawlRows deletes every row of a crawl ReleaseCrawl released, in one transaction, and
// counts them per table.
func (agg Deletes) DeleteCrawlRows(ctx context.Context, crawlID string) (map[string]int64, error) {
	s := agg.s
	rows := map[string]int64{}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var state string
		err := tx.QueryRow(ctx, `SELECT state FROM crawls WHERE id = $1 FOR UPDATE`, crawlID).Scan(&state)
		if err == nil && state != string(crawl.CrawlDeleting) {
			return fmt.Errorf("the crawl is %s, not released for deletion", state)
		}
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		for _, t := range crawlTables {
			tag, err := tx.Exec(ctx, `DELETE FROM `+t+` WHERE `+crawlRowsWhere(t), crawlID)
			if err != nil {
				return fmt.Errorf("delete from %s: %w", t, err)
			}
			if n := tag.RowsAffected(); n > 0 {
				rows[t] = n
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: delete crawl %s: %w", crawlID, err)
	}
	return rows, nil
}

// PendingObjectDeletes are the objects deletes of crawlID decided to remove and have not yet
// removed ("": every crawl's).
func (agg Deletes) PendingObjectDeletes(ctx context.Context, crawlID string) ([]string, error) {
	s := agg.s
	return s.strings(ctx, `SELECT key FROM object_deletes WHERE crawl_id = $1 OR $1 = '' ORDER BY key`, crawlID)
}

// ObjectsDeleted forgets pending deletes once the objects are gone.
func (agg Deletes) ObjectsDeleted(ctx context.Context, keys []string) error {
	s := agg.s
	if _, err := s.pool.Exec(ctx, `DELETE FROM object_deletes WHERE key = ANY($1)`, keys); err != nil {
		return fmt.Errorf("store: forget object deletes: %w", err)
	}
	return nil
}

// segmentOf is the segment key of a body reference (a plain key is itself).
func segmentOf(ref string) string {
	if i := strings.LastIndexByte(ref, '#'); i >= 0 {
		return ref[:i]
	}
	return ref
}

// CrawlsFinishedBefore names the crawls that ended (done or stopped) before t, oldest first,
// and those whose delete was cut short.
func (agg Deletes) CrawlsFinishedBefore(ctx context.Context, t time.Time) ([]string, error) {
	s := agg.s
	return s.strings(ctx, `SELECT id FROM crawls WHERE (state IN ('done', 'stopped') AND finished_at < $1) OR state = 'deleting'
		ORDER BY finished_at, id`, t)
}

// CrawlLive reports whether a crawl exists, and whether it is running or paused.
func (agg Crawls) CrawlLive(ctx context.Context, crawlID string) (exists, live bool, err error) {
	s := agg.s
	var state string
	err = s.pool.QueryRow(ctx, `SELECT state FROM crawls WHERE id = $1`, crawlID).Scan(&state)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, false, nil
	}
	if err != nil {
		return false, false, fmt.Errorf("store: crawl %s: %w", crawlID, err)
	}
	return true, state == string(crawl.CrawlRunning) || state == string(crawl.CrawlPaused), nil
}

func (s *Store) strings(ctx context.Context, sql string, args ...any) ([]string, error) {
	out, err := collectStrings(ctx, s.pool, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	return out, nil
}

func collectStrings(ctx context.Context, q querier, sql string, args ...any) ([]string, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// likePrefixes turns key prefixes into LIKE patterns (the prefixes' own % and _ escaped).
func likePrefixes(prefixes []string) []string {
	out := make([]string, len(prefixes))
	for i, p := range prefixes {
		out[i] = likeEscape(p) + "%"
	}
	return out
}

func likeEscape(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' || s[i] == '_' || s[i] == '\\' {
			b = append(b, '\\')
		}
		b = append(b, s[i])
	}
	return string(b)
}
