package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
)

// The near-duplicate index (dedup_keys) is unlogged (schema 0037): what it holds is derived
// from documents.dedup_keys, so it costs no WAL, and a crash or a failover leaves it empty.
// dedup_keys_state, unlogged too, holds a row while the index is whole: a save that finds it
// empty rolls back, the index is rebuilt from documents, and the save runs again.

// errNearIndexLost says the near-duplicate index was lost with a crash or a failover.
var errNearIndexLost = errors.New("the near-duplicate index is empty after a crash or a failover")

// nearIndexWholeSQL says whether the near-duplicate index is whole (a save's first statement).
const nearIndexWholeSQL = `SELECT EXISTS (SELECT 1 FROM dedup_keys_state)`

// nearIndexLock is the advisory lock one rebuild at a time holds (the two-int4 key space,
// apart from the bigint keys saves lock: Postgres keeps the two apart).
const nearIndexLock = `SELECT pg_advisory_xact_lock(49, 1)`

// rebuildNearIndex files every document's keys again, unless another process did meanwhile.
func (s *Store) rebuildNearIndex(ctx context.Context) error {
	began := time.Now()
	var filed int64
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, nearIndexLock); err != nil {
			return err
		}
		var whole bool
		if err := tx.QueryRow(ctx, nearIndexWholeSQL).Scan(&whole); err != nil || whole {
			return err
		}
		tag, err := tx.Exec(ctx, `INSERT INTO dedup_keys (crawl_id, key, url_hash)
			SELECT crawl_id, unnest(dedup_keys), url_hash FROM documents WHERE dedup_keys IS NOT NULL ON CONFLICT DO NOTHING`)
		if err != nil {
			return err
		}
		filed = tag.RowsAffected()
		_, err = tx.Exec(ctx, `INSERT INTO dedup_keys_state DEFAULT VALUES`)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: rebuild the near-duplicate index: %w", err)
	}
	if filed > 0 {
		slog.Warn("store: rebuilt the near-duplicate index, lost with a crash or a failover", "keys", filed, "took", time.Since(began).Round(time.Millisecond))
	}
	return nil
}
