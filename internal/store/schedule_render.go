package store

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/trawlerdev/trawler/internal/pacing"
)

// BookRenderSlot books the host's next request start for a page of crawlID that is rendering,
// only while the crawl runs and only if that start comes no later than latest (the page's
// deadline): a page never books host time it cannot use, so however many requests it makes,
// the host's schedule after the page is as after one page. When ip is valid the start also
// keeps ipGap after the previous booking on that address, as a fetch lease's does (per-IP
// politeness). One round trip without an address; a short transaction with one.
func (agg HostSchedule) BookRenderSlot(ctx context.Context, host, crawlID string, gap time.Duration, ip netip.Addr, ipGap time.Duration, latest time.Time) (pacing.RenderSlot, error) {
	s := agg.s
	if err := s.toDB(ctx, &latest); err != nil {
		return pacing.RenderSlot{}, err
	}
	if !ip.IsValid() {
		return agg.bookRenderSlot(ctx, s.pool, host, crawlID, gap, nil, latest)
	}
	var slot pacing.RenderSlot
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// The host's row first, then the address's: the order fetch bookings lock them in.
		if _, err := tx.Exec(ctx, `INSERT INTO hosts (host) VALUES ($1) ON CONFLICT (host) DO UPDATE SET host = excluded.host`, host); err != nil {
			return err
		}
		var ipNext time.Time
		if err := tx.QueryRow(ctx, `INSERT INTO ip_slots (ip, next_at) VALUES ($1, 'epoch') ON CONFLICT (ip) DO UPDATE SET ip = excluded.ip
			RETURNING next_at`, ip.Unmap().String()).Scan(&ipNext); err != nil {
			return err
		}
		var err error
		if slot, err = agg.bookRenderSlot(ctx, tx, host, crawlID, gap, &ipNext, latest); err != nil || !slot.Booked {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE ip_slots SET next_at = $2 WHERE ip = $1`, ip.Unmap().String(), slot.Mark.Add(ipGap))
		return err
	})
	if err != nil {
		return pacing.RenderSlot{}, fmt.Errorf("store: book a render slot on %s (%s): %w", host, ip, err)
	}
	return slot, nil
}

// rowQuerier is a pool or a transaction.
type rowQuerier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// bookRenderSlot books the host's slot, no sooner than notBefore (the address's next start,
// on the database's clock) when set.
func (agg HostSchedule) bookRenderSlot(ctx context.Context, q rowQuerier, host, crawlID string, gap time.Duration, notBefore *time.Time, latest time.Time) (pacing.RenderSlot, error) {
	s := agg.s
	slot := pacing.RenderSlot{Host: host, Gap: gap}
	var start *time.Time
	var db time.Time
	read := s.clock.reading()
	err := q.QueryRow(ctx, `WITH c AS (SELECT state FROM crawls WHERE id = $4),
		b AS (UPDATE hosts h SET next_request_at = greatest(clock_timestamp(), h.next_request_at, $5::timestamptz) + $2::interval
			WHERE h.host = $1 AND (SELECT state FROM c) = 'running'
				AND greatest(clock_timestamp(), coalesce(h.next_request_at, '-infinity'), $5::timestamptz) <= $3::timestamptz
			RETURNING h.next_request_at - $2::interval AS start)
		SELECT coalesce((SELECT state FROM c), ''), (SELECT start FROM b), clock_timestamp()`,
		host, gap, latest, crawlID, notBefore).Scan(&slot.CrawlState, &start, &db)
	if err != nil {
		return pacing.RenderSlot{}, fmt.Errorf("store: book a render slot on %s: %w", host, err)
	}
	read(db)
	if start != nil {
		slot.Booked, slot.Mark, slot.Start = true, *start, s.clock.fromDB(*start)
	}
	return slot, nil
}

// ReleaseRenderSlot gives back a slot its page did not use (the page ended while it waited),
// if nobody booked the host after it: the host's next start moves back to the slot's.
func (agg HostSchedule) ReleaseRenderSlot(ctx context.Context, slot pacing.RenderSlot) error {
	if !slot.Booked {
		return nil
	}
	_, err := agg.s.pool.Exec(ctx, `UPDATE hosts SET next_request_at = $2::timestamptz WHERE host = $1 AND next_request_at = $2::timestamptz + $3::interval`,
		slot.Host, slot.Mark, slot.Gap)
	if err != nil {
		return fmt.Errorf("store: release a render slot on %s: %w", slot.Host, err)
	}
	return nil
}

// DeferHost moves the host's next request start to until at the earliest (a 429 or 503 with
// Retry-After): every booking of the host — fetch leases' windows after the current one,
// renders' slots — starts no sooner.
func (agg HostSchedule) DeferHost(ctx context.Context, host string, until time.Time) error {
	s := agg.s
	if err := s.toDB(ctx, &until); err != nil {
		return err
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO hosts AS h (host, next_request_at) VALUES ($1, $2)
		ON CONFLICT (host) DO UPDATE SET next_request_at = greatest(h.next_request_at, $2)`, host, until)
	if err != nil {
		return fmt.Errorf("store: defer %s: %w", host, err)
	}
	return nil
}
