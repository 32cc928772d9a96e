package store

import (
	"context"
	"fmt"
	"net/netip"
	"time"
)

// BookIPSlot reserves the next request start on ip, at least gap after the previous booking
// (and not before now), and returns it. Bookings from every worker serialize on the row.
func (s *Store) BookIPSlot(ctx context.Context, ip netip.Addr, gap time.Duration) (time.Time, error) {
	var start time.Time
	err := s.pool.QueryRow(ctx, `INSERT INTO ip_slots (ip, next_at) VALUES ($1, now() + $2::interval)
		ON CONFLICT (ip) DO UPDATE SET next_at = greatest(ip_slots.next_at, now()) + $2::interval
		RETURNING next_at - $2::interval`, ip.Unmap().String(), gap).Scan(&start)
	if err != nil {
		return time.Time{}, fmt.Errorf("store: book a request slot on %s: %w", ip, err)
	}
	return start, nil
}
