package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// OpenLease records that a fetch lease of host runs under owner (kept when it exists) and
// says whether it is already over: a retried attempt of a lease that ended (its result lost)
// must not fetch again after its processing was told the lease is over.
func (s *Store) OpenLease(ctx context.Context, owner, host string) (done bool, err error) {
	err = s.pool.QueryRow(ctx, `INSERT INTO fetch_leases (owner, host) VALUES ($1, $2)
		ON CONFLICT (owner) DO UPDATE SET host = excluded.host
		RETURNING done_at IS NOT NULL`, owner, host).Scan(&done)
	if err != nil {
		return false, fmt.Errorf("store: open lease %s: %w", owner, err)
	}
	return done, nil
}

const endLeaseSQL = `INSERT INTO fetch_leases (owner, host, done_at) VALUES ($1, $2, now())
	ON CONFLICT (owner) DO UPDATE SET done_at = coalesce(fetch_leases.done_at, now())`

// EndLease marks a lease over: nothing more will be fetched under it.
func (s *Store) EndLease(ctx context.Context, owner, host string) error {
	if _, err := s.pool.Exec(ctx, endLeaseSQL, owner, host); err != nil {
		return fmt.Errorf("store: end lease %s: %w", owner, err)
	}
	return nil
}

// DropLease forgets a lease whose pages are all processed.
func (s *Store) DropLease(ctx context.Context, owner string) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM fetch_leases WHERE owner = $1`, owner); err != nil {
		return fmt.Errorf("store: drop lease %s: %w", owner, err)
	}
	return nil
}

// LeaseState is what the processing of a lease sees in one round trip: whether the lease
// row exists and is over, and the pages fetched under its owners that await processing.
type LeaseState struct {
	Exists, Done bool
	Pages        []FetchedPage
	// Backlog: the host has at least BacklogDepth URLs due now, so the lease does not wait
	// for the links its pages yield and their processing can take bigger batches.
	Backlog bool
}

// BacklogDepth is how many due URLs make a host's queue deep (LeaseState.Backlog).
const BacklogDepth = 10

// LeasePages reads a lease's state (see LeaseState). The lease row is read before the pages,
// each statement on its own snapshot: a lease seen over has every page it fetched committed
// before that read, so they are all in Pages (unless processed since).
func (s *Store) LeasePages(ctx context.Context, lease, host string, owners []string) (LeaseState, error) {
	var st LeaseState
	b := &pgx.Batch{}
	b.Queue(`SELECT done_at IS NOT NULL FROM fetch_leases WHERE owner = $1`, lease)
	b.Queue(fetchedOwnedSQL, host, owners)
	b.Queue(`SELECT count(*) >= $2 FROM (SELECT 1 FROM urls WHERE host = $1 AND state = 'queued' AND next_fetch_at <= now() LIMIT $2) x`,
		host, BacklogDepth)
	br := s.pool.SendBatch(ctx, b)
	defer br.Close()
	err := br.QueryRow().Scan(&st.Done)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
	case err != nil:
		return LeaseState{}, fmt.Errorf("store: lease %s: %w", lease, err)
	default:
		st.Exists = true
	}
	rows, err := br.Query()
	if err == nil {
		st.Pages, err = pgx.CollectRows(rows, scanOwnedPage)
	}
	if err == nil {
		err = br.QueryRow().Scan(&st.Backlog)
	}
	if err != nil {
		return LeaseState{}, fmt.Errorf("store: pages of lease %s: %w", lease, err)
	}
	return st, nil
}

// HostDue says when host's next queued URL of a running crawl is due (nil: none queued) and
// how many pages fetched under owners await processing, in one cheap round trip: what a
// fetch lease whose host ran dry looks at before it claims again.
func (s *Store) HostDue(ctx context.Context, host string, owners []string) (*time.Time, int, error) {
	var next *time.Time
	var awaiting int
	err := s.pool.QueryRow(ctx, `SELECT
			(SELECT u.next_fetch_at FROM urls u JOIN crawls c ON c.id = u.crawl_id AND c.state = 'running'
				WHERE u.host = $1 AND u.state = 'queued' ORDER BY u.next_fetch_at LIMIT 1),
			(SELECT count(*) FROM urls WHERE host = $1 AND state = 'fetched' AND claimed_by = ANY($2))`,
		host, owners).Scan(&next, &awaiting)
	if err != nil {
		return nil, 0, fmt.Errorf("store: when %s is due: %w", host, err)
	}
	return next, awaiting, nil
}
