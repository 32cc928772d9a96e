package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// pipelinedTx is a transaction of a few dependent batches whose BEGIN rides on its first batch
// and whose COMMIT rides on its last: a transaction of two batches costs two round trips, not
// four (BEGIN and COMMIT each being one of their own).
type pipelinedTx struct {
	conn             *pgxpool.Conn
	begun, committed bool
}

// inPipelinedTx runs fn in a pipelined transaction on one connection. It commits what fn left
// open, and rolls back when fn fails.
func (s *Store) inPipelinedTx(ctx context.Context, fn func(*pipelinedTx) error) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	// A connection still inside a transaction when released is closed by the pool, not reused.
	defer conn.Release()
	t := &pipelinedTx{conn: conn}
	if err := fn(t); err != nil {
		if t.begun && !t.committed {
			_, _ = conn.Exec(context.WithoutCancel(ctx), "ROLLBACK")
		}
		return err
	}
	if t.begun && !t.committed {
		if _, err := conn.Exec(ctx, "COMMIT"); err != nil {
			return fmt.Errorf("commit: %w", err)
		}
	}
	return nil
}

// send sends b, preceded by BEGIN when it is the transaction's first batch and followed by
// COMMIT when final, and lets read consume b's own results.
func (t *pipelinedTx) send(ctx context.Context, b *pgx.Batch, final bool, read func(pgx.BatchResults) error) error {
	nb := &pgx.Batch{}
	begin := !t.begun
	if begin {
		nb.Queue("BEGIN")
	}
	nb.QueuedQueries = append(nb.QueuedQueries, b.QueuedQueries...)
	if final {
		nb.Queue("COMMIT")
	}
	br := t.conn.SendBatch(ctx, nb)
	t.begun = true
	err := func() error {
		if begin {
			if _, err := br.Exec(); err != nil {
				return fmt.Errorf("begin: %w", err)
			}
		}
		if err := read(br); err != nil {
			return err
		}
		if final {
			if _, err := br.Exec(); err != nil {
				return fmt.Errorf("commit: %w", err)
			}
		}
		return nil
	}()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err == nil && final {
		t.committed = true
	}
	return err
}
