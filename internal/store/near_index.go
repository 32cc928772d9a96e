package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// The near-duplicate index (dedup_keys) is unlogged (schema 0037): what it holds is derived
// from documents.dedup_keys, so it costs no WAL, and a crash or a failover leaves it empty.
// dedup_keys_state, unlogged too, holds a row while the index is whole: a save that finds it
// empty rolls back, the index is rebuilt from documents, and the save runs again.

// nearKeySQL is the near-duplicate index's key of a document's key in its crawl, as a SQL
// expression: the two mixed into one bigint (schema 0045, whose trigger repeats it), so an
// entry is a third narrower and compares as integers. A bigint two crawls' keys share (about
// one chance in 2⁶⁴) costs at most a candidate, judged by its fingerprint like any other.
func nearKeySQL(crawl, key string) string { return "hashtextextended(" + crawl + ", " + key + ")" }

// errNearIndexLost says the near-duplicate index was lost with a crash or a failover.
var errNearIndexLost = errors.New("the near-duplicate index is empty after a crash or a failover")

// nearIndexWholeSQL says whether the near-duplicate index is whole (a save's first statement).
const nearIndexWholeSQL = `SELECT EXISTS (SELECT 1 FROM dedup_keys_state)`

// nearIndexTryLock takes the advisory lock one rebuild at a time holds, if it is free (the
// two-int4 key space, apart from the bigint keys saves lock: Postgres keeps the two apart).
const nearIndexTryLock = `SELECT pg_try_advisory_xact_lock(49, 1)`

// nearRebuilds is a process's one rebuild of the near-duplicate index at a time: every save
// that finds the index lost waits for the same one.
type nearRebuilds struct {
	mu  sync.Mutex
	run *nearRebuild
}

// nearRebuild is one rebuild: done closes when it ends, err is its outcome.
type nearRebuild struct {
	done chan struct{}
	err  error
}

// nearRebuildTimeout bounds one rebuild: every document's keys filed again in one statement.
const nearRebuildTimeout = time.Hour

// rebuildNearIndex waits until the near-duplicate index is whole again. The rebuild runs
// detached from ctx: a save that gives up (its activity's timeout, a worker stopping) must not
// roll back a rebuild the process's other saves wait for.
func (s *Store) rebuildNearIndex(ctx context.Context) error {
	n := &s.near
	n.mu.Lock()
	r := n.run
	if r == nil {
		r = &nearRebuild{done: make(chan struct{})}
		n.run = r
		go func() {
			r.err = s.rebuildNearIndexNow()
			n.mu.Lock()
			n.run = nil
			n.mu.Unlock()
			close(r.done)
		}()
	}
	n.mu.Unlock()
	select {
	case <-r.done:
		return r.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// rebuildNearIndexNow files every document's keys again, unless another process did
// meanwhile. While another process rebuilds (it holds the lock), it waits for that one without
// holding a connection.
func (s *Store) rebuildNearIndexNow() error {
	ctx, cancel := context.WithTimeout(context.Background(), nearRebuildTimeout)
	defer cancel()
	began := time.Now()
	for {
		var filed int64
		var busy bool
		err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			var locked, whole bool
			if err := tx.QueryRow(ctx, nearIndexTryLock).Scan(&locked); err != nil || !locked {
				busy = !locked
				return err
			}
			if err := tx.QueryRow(ctx, nearIndexWholeSQL).Scan(&whole); err != nil || whole {
				return err
			}
			// (whatever the index still holds goes first: it is not unique, schema 0039, and
			// a state row lost without its keys, by hand or by a partial restore, must not
			// file every key twice)
			if _, err := tx.Exec(ctx, `DELETE FROM dedup_keys`); err != nil {
				return err
			}
			tag, err := tx.Exec(ctx, `INSERT INTO dedup_keys (key, url_hash, simhash)
				SELECT `+nearKeySQL("d.crawl_id", "k")+`, d.url_hash, d.simhash FROM documents d CROSS JOIN unnest(d.dedup_keys) k
				WHERE d.dedup_keys IS NOT NULL AND d.simhash IS NOT NULL`)
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
		if !busy {
			if filed > 0 {
				slog.Warn("store: rebuilt the near-duplicate index, lost with a crash or a failover", "keys", filed, "took", time.Since(began).Round(time.Millisecond))
			}
			return nil
		}
		var whole bool
		if err := s.pool.QueryRow(ctx, nearIndexWholeSQL).Scan(&whole); err != nil {
			return fmt.Errorf("store: wait for the near-duplicate index: %w", err)
		}
		if whole {
			return nil
		}
		t := time.NewTimer(time.Second)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("store: wait for the near-duplicate index: %w", ctx.Err())
		case <-t.C:
		}
	}
}

// keysLiteral is keys as a Postgres array literal ("{1,-2,3}").
func keysLiteral(keys []int64) *string {
	if len(keys) == 0 {
		return nil
	}
	b := make([]byte, 0, 1+len(keys)*21)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, k, 10)
	}
	s := string(append(b, '}'))
	return &s
}
