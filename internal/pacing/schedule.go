package pacing

import (
	"context"
	"net/netip"
	"time"
)

// Store is the store's surface for host schedules: the only statements that write a host's
// next request start (hosts.next_request_at) and an address's (ip_slots). Bookings from
// every worker and every attempt serialize on the rows, so two attempts of one lease, a
// lease and a rendered page, or two hosts on one address keep their spacing. Times are on the
// local clock; the store converts them to and from the database's.
type Store interface {
	// BookSlot reserves the host's next request start: no earlier than earliest, hostGap after
	// its previous booking and, when ip is valid, ipGap after that address's; with url, the
	// URL's state and its crawl's are read in the same round trip.
	BookSlot(ctx context.Context, host string, hostGap time.Duration, ip netip.Addr, ipGap time.Duration, earliest time.Time, url *URLKey) (Slot, error)
	// BookWindow books the host's next n gaps in one round trip (continuing the caller's own
	// window, Mark own, when nobody booked since) and reads urls' states.
	BookWindow(ctx context.Context, host string, gap time.Duration, n int, earliest, own time.Time, urls []URLKey, epoch uint64) (Window, error)
	// SettleWindow ends a window (end: its Mark, zero for none): the host's next start
	// becomes next, or moves out to it when someone booked since.
	SettleWindow(ctx context.Context, host string, end, next time.Time) error
	// PushSlot moves the host's next start out to hostNext, and the address's to ipNext.
	PushSlot(ctx context.Context, host string, hostNext time.Time, ip netip.Addr, ipNext time.Time) error
	// DeferHost moves the host's next start out to until.
	DeferHost(ctx context.Context, host string, until time.Time) error
	// BookRenderSlot books the host's next start for a rendered page of crawlID, only while
	// the crawl runs and only if it comes by latest.
	BookRenderSlot(ctx context.Context, host, crawlID string, gap time.Duration, ip netip.Addr, ipGap time.Duration, latest time.Time) (RenderSlot, error)
	// ReleaseRenderSlot gives back a render slot if nobody booked the host after it.
	ReleaseRenderSlot(ctx context.Context, slot RenderSlot) error
}

// Schedule books hosts' request time for a stage: each booking spaced by the pace's gap and
// margin (Gap), on the host's schedule and, under per-IP politeness, its address's.
type Schedule struct {
	Store Store
	IP    IPLimit // per-IP politeness (zero: off)
}

// IPOf is the address the host's requests count under (IPLimit.Of).
func (s *Schedule) IPOf(ctx context.Context, host string) netip.Addr { return s.IP.Of(ctx, host) }

// ipGap is what a booking spaces an address's requests by.
func (s *Schedule) ipGap() time.Duration { return Gap(s.IP.Gap) }

// Tolerance is how late a request may leave after its slot (half the smallest margin that
// applies to it): later, it could land too close to the next slot's request.
func (s *Schedule) Tolerance(delay time.Duration, ip netip.Addr) time.Duration {
	t := GapMargin(delay) / 2
	if ip.IsValid() {
		t = min(t, GapMargin(s.IP.Gap)/2)
	}
	return t
}

// Book reserves the host's next request start, delay (and its margin) after its previous
// one, counted under ip (see IPOf; zero: not per address), no sooner than earliest; with url,
// that URL's state comes with it.
func (s *Schedule) Book(ctx context.Context, host string, delay time.Duration, ip netip.Addr, earliest time.Time, url *URLKey) (Slot, error) {
	return s.Store.BookSlot(ctx, host, Gap(delay), ip, s.ipGap(), earliest, url)
}

// BookWindow books n requests of the host at delay in one round trip (Store.BookWindow).
func (s *Schedule) BookWindow(ctx context.Context, host string, delay time.Duration, n int, earliest, own time.Time, urls []URLKey, epoch uint64) (Window, error) {
	return s.Store.BookWindow(ctx, host, Gap(delay), n, earliest, own, urls, epoch)
}

// Settle ends a lease's window (Store.SettleWindow).
func (s *Schedule) Settle(ctx context.Context, host string, end, next time.Time) error {
	return s.Store.SettleWindow(ctx, host, end, next)
}

// Sent spaces the host's next request (and its address's, when ip is valid) from a request
// that left at at, later than its slot: the next start moves out to a delay after it.
func (s *Schedule) Sent(ctx context.Context, host string, delay time.Duration, ip netip.Addr, at time.Time) error {
	return s.Store.PushSlot(ctx, host, at.Add(Gap(delay)), ip, at.Add(s.ipGap()))
}

// Defer holds every booking of the host until until (a 429 or 503 with Retry-After).
func (s *Schedule) Defer(ctx context.Context, host string, until time.Time) error {
	return s.Store.DeferHost(ctx, host, until)
}

// BookRender books the host's next start for a rendered page's subresource, at delay, by
// latest (the page's deadline) or not at all (Store.BookRenderSlot).
func (s *Schedule) BookRender(ctx context.Context, host, crawlID string, delay time.Duration, ip netip.Addr, latest time.Time) (RenderSlot, error) {
	return s.Store.BookRenderSlot(ctx, host, crawlID, Gap(delay), ip, s.ipGap(), latest)
}

// ReleaseRender gives back a render slot its page did not use.
func (s *Schedule) ReleaseRender(ctx context.Context, slot RenderSlot) error {
	return s.Store.ReleaseRenderSlot(ctx, slot)
}
