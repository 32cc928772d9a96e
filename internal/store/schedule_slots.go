package store

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/trawlerdev/trawler/internal/pacing"
)

// HostSchedule is the store's surface for hosts' schedules (pacing.Store): the only
// statements that write a host's next request start (hosts.next_request_at) or an address's
// (ip_slots). internal/pacing is its one client; a stage books through pacing.Schedule.
type HostSchedule struct{ s *Store }

// Schedule is the store's surface for hosts' schedules.
func (s *Store) Schedule() HostSchedule { return HostSchedule{s: s} }

// BookSlot reserves the next request start for host: no earlier than earliest, at least
// hostGap after the host's previous booking and, when ip is valid, ipGap after the previous
// booking on that address (hosts sharing an IP). Times are on the local clock; the store
// converts them to and from the database's, where every process's bookings meet. With url
// (nil: a request of no frontier URL, such as robots.txt) it reads, in the same round trip,
// what URLState reads: whether the URL is still claimed and its crawl still running.
// Bookings from every worker and every attempt of an activity serialize on the rows, so two
// attempts of one fetch batch (a retry, and a stale one that has not noticed yet) still keep
// the host's spacing.
func (agg HostSchedule) BookSlot(ctx context.Context, host string, hostGap time.Duration, ip netip.Addr, ipGap time.Duration, earliest time.Time, url *pacing.URLKey) (pacing.Slot, error) {
	s := agg.s
	if err := s.toDB(ctx, &earliest); err != nil {
		return pacing.Slot{}, err
	}
	var slot pacing.Slot
	key := pacing.URLKey{}
	if url != nil {
		key = *url
	}
	if !ip.IsValid() {
		// The host's schedule alone: one statement, one round trip. The upsert locks the row,
		// so bookings still serialize, and the start is read and moved in the same step.
		var db time.Time
		read := s.clock.reading()
		err := s.pool.QueryRow(ctx, `INSERT INTO hosts AS h (host, next_request_at)
				VALUES ($1, greatest(clock_timestamp(), $2::timestamptz) + $3::interval)
			ON CONFLICT (host) DO UPDATE SET next_request_at = greatest(clock_timestamp(), $2::timestamptz, h.next_request_at) + $3::interval
			RETURNING next_request_at - $3::interval, clock_timestamp(),
				coalesce((SELECT state FROM urls WHERE crawl_id = $4 AND url_hash = $5), ''),
				coalesce((SELECT state FROM crawls WHERE id = $4), '')`, host, earliest, hostGap, key.CrawlID, key.Hash).
			Scan(&slot.Start, &db, &slot.URLState, &slot.CrawlState)
		if err != nil {
			return pacing.Slot{}, fmt.Errorf("store: book a request slot on %s: %w", host, err)
		}
		read(db)
		slot.Start = s.clock.fromDB(slot.Start)
		return slot, nil
	}
	start, err := agg.bookSlotIP(ctx, host, hostGap, ip, ipGap, earliest)
	start = s.clock.fromDB(start)
	if err != nil || url == nil {
		return pacing.Slot{Start: start}, err
	}
	slot.Start = start
	slot.URLState, slot.CrawlState, err = s.Frontier().URLState(ctx, url.CrawlID, url.Hash)
	return slot, err
}

// bookSlotIP books a slot on the host's schedule and its address's; earliest and the start
// are on the database's clock.
func (agg HostSchedule) bookSlotIP(ctx context.Context, host string, hostGap time.Duration, ip netip.Addr, ipGap time.Duration, earliest time.Time) (time.Time, error) {
	s := agg.s
	var start time.Time
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var hostNext, ipNext *time.Time
		if err := tx.QueryRow(ctx, `INSERT INTO hosts (host) VALUES ($1) ON CONFLICT (host) DO UPDATE SET host = excluded.host
			RETURNING next_request_at`, host).Scan(&hostNext); err != nil {
			return err
		}
		if ip.IsValid() {
			if err := tx.QueryRow(ctx, `INSERT INTO ip_slots (ip, next_at) VALUES ($1, 'epoch') ON CONFLICT (ip) DO UPDATE SET ip = excluded.ip
				RETURNING next_at`, ip.Unmap().String()).Scan(&ipNext); err != nil {
				return err
			}
		}
		var db time.Time
		read := s.clock.reading()
		if err := tx.QueryRow(ctx, `SELECT greatest(clock_timestamp(), $1::timestamptz, $2::timestamptz, $3::timestamptz), clock_timestamp()`,
			earliest, hostNext, ipNext).Scan(&start, &db); err != nil {
			return err
		}
		read(db)
		if _, err := tx.Exec(ctx, `UPDATE hosts SET next_request_at = $2 WHERE host = $1`, host, start.Add(hostGap)); err != nil {
			return err
		}
		if ip.IsValid() {
			if _, err := tx.Exec(ctx, `UPDATE ip_slots SET next_at = $2 WHERE ip = $1`, ip.Unmap().String(), start.Add(ipGap)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("store: book a request slot on %s: %w", host, err)
	}
	return start, nil
}

// PushSlot moves the host's next request slot, and the address's when ip is valid, out to at
// least hostNext and ipNext: a request that left later than its slot spaces the next one from
// when it really left.
func (agg HostSchedule) PushSlot(ctx context.Context, host string, hostNext time.Time, ip netip.Addr, ipNext time.Time) error {
	s := agg.s
	if err := s.toDB(ctx, &hostNext, &ipNext); err != nil {
		return err
	}
	b := &pgx.Batch{}
	b.Queue(`UPDATE hosts SET next_request_at = greatest(next_request_at, $2) WHERE host = $1`, host, hostNext)
	if ip.IsValid() {
		b.Queue(`UPDATE ip_slots SET next_at = greatest(next_at, $2) WHERE ip = $1`, ip.Unmap().String(), ipNext)
	}
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("store: push the next request slot on %s: %w", host, err)
	}
	return nil
}

var _ pacing.Store = HostSchedule{}
