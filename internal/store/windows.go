package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Window is a run of a host's request time booked by one fetch lease: its requests start in
// [Start, End-gap], paced by the lease itself, and every other booking of the host (another
// attempt, a redirect from another host) starts at End or later. States holds, for the URLs
// named at booking, their state and their crawl's ("" when not in the frontier), keyed by
// WindowKey.
type Window struct {
	Start, End time.Time
	States     map[string]WindowState
}

// WindowState is a URL's state and its crawl's, and when they were read (on the local clock):
// when its window was booked, or when the URL was claimed.
type WindowState struct {
	URL, Crawl string
	At         time.Time
	Epoch      uint64 // the ControlWatch's epoch before they were read
}

// WindowKey is how Window.States names a URL.
func WindowKey(u URLKey) string { return u.CrawlID + "\x00" + string(u.Hash) }

// bookWindowSQL books n gaps ($3) of host $1 from no earlier than $2: after the host's last
// booking, unless that booking is the caller's own window ending at $4, which it extends
// (a lease paces its own requests; only others must start after its window). It reads the
// states of the URLs $5/$6 in the same statement.
const bookWindowSQL = `WITH b AS (
	INSERT INTO hosts AS h (host, next_request_at) VALUES ($1, greatest(clock_timestamp(), $2::timestamptz) + $3::interval)
	ON CONFLICT (host) DO UPDATE SET next_request_at = greatest(clock_timestamp(), $2::timestamptz,
		CASE WHEN h.next_request_at = $4::timestamptz THEN NULL ELSE h.next_request_at END) + $3::interval
	RETURNING next_request_at)
SELECT b.next_request_at,
	array(SELECT coalesce(u.state, '') FROM unnest($5::text[], $6::bytea[]) WITH ORDINALITY AS t(c, h, ord)
		LEFT JOIN urls u ON u.crawl_id = t.c AND u.url_hash = t.h ORDER BY t.ord),
	array(SELECT coalesce(c.state, '') FROM unnest($5::text[]) WITH ORDINALITY AS t(c, ord)
		LEFT JOIN crawls c ON c.id = t.c ORDER BY t.ord)
FROM b`

// BookWindow books the host's next n request gaps in one round trip and reads the states of
// urls (the requests the window is for). own is the End of the caller's current window (zero:
// none): when nobody has booked the host since, the new window continues it from earliest
// instead of starting after it. Bookings from every worker and every attempt serialize on
// the host's row, so two attempts of one lease never have overlapping windows.
func (s *Store) BookWindow(ctx context.Context, host string, gap time.Duration, n int, earliest, own time.Time, urls []URLKey) (Window, error) {
	n = max(n, 1)
	crawls := make([]string, len(urls))
	hashes := make([][]byte, len(urls))
	for i, u := range urls {
		crawls[i], hashes[i] = u.CrawlID, u.Hash
	}
	var ownEnd *time.Time
	if !own.IsZero() {
		ownEnd = &own
	}
	var w Window
	var states, crawlStates []string
	if err := s.pool.QueryRow(ctx, bookWindowSQL, host, earliest, time.Duration(n)*gap, ownEnd, crawls, hashes).
		Scan(&w.End, &states, &crawlStates); err != nil {
		return Window{}, fmt.Errorf("store: book %d request slots on %s: %w", n, host, err)
	}
	w.Start = w.End.Add(-time.Duration(n) * gap)
	w.States = make(map[string]WindowState, len(urls))
	now := time.Now()
	for i, u := range urls {
		if i < len(states) && i < len(crawlStates) {
			w.States[WindowKey(u)] = WindowState{URL: states[i], Crawl: crawlStates[i], At: now}
		}
	}
	return w, nil
}

const giveBackSQL = `UPDATE hosts SET next_request_at = $3 WHERE host = $1 AND next_request_at = $2 AND $3 < $2`

// GiveBackWindow moves the host's next booking back from the end of a window to next when
// nobody has booked the host since: the lease that booked it is over and did not use it all.
func (s *Store) GiveBackWindow(ctx context.Context, host string, end, next time.Time) error {
	if _, err := s.pool.Exec(ctx, giveBackSQL, host, end, next); err != nil {
		return fmt.Errorf("store: give back the request slots of %s: %w", host, err)
	}
	return nil
}

// EndLeaseGivingBack is EndLease and GiveBackWindow in one round trip.
func (s *Store) EndLeaseGivingBack(ctx context.Context, owner, host string, end, next time.Time) error {
	b := &pgx.Batch{}
	b.Queue(endLeaseSQL, owner, host)
	b.Queue(giveBackSQL, host, end, next)
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("store: end lease %s and give back the request slots of %s: %w", owner, host, err)
	}
	return nil
}
