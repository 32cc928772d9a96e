package fetching

import (
	"context"
	"errors"
	"maps"
	"time"

	"github.com/trawlerdev/trawler/internal/clock"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/pacing"
	"github.com/trawlerdev/trawler/internal/urlnorm"
)

// maxLateSlots is how many slots in a row one request gives up for waking too late.
const maxLateSlots = 3

// errDeferred says the host asked us to wait (Retry-After) while a request waited for its slot.
var errDeferred = errors.New("host deferred")

// errSlotFar says the host's next page request may not leave for longer than a lease waits
// (pacing.InLeaseWait) and the lease has made a request: a long Crawl-delay is waited out by the host
// workflow's durable timer, not by a lease holding a fetch worker's slot. The lease ends; its
// unfinished claims are the next lease's.
var errSlotFar = errors.New("the host's next request is too far off for the lease to wait")

// errWindowLater says the lease's window starts later than a gap from now (someone else held
// the host's time): wait for its start, then book again for the URL states.
var errWindowLater = errors.New("window starts later")

// windowAhead is how far ahead of its requests a lease books its host's time, and
// windowSlots how many requests one booking covers at most: one round trip books a few
// requests and reads their URLs' states, instead of one each. The horizon bounds how long a
// lease that dies holds its host's time (one that ends gives the rest back: unused), and what
// waits behind it (a redirect from another host). stateFresh bounds how old a URL's state
// read at a claim or a booking may be when its request leaves: controls (pause, stop, block)
// are told at once (Stage.Control); what remains is a stale attempt fetching a URL too.
const (
	windowAhead = 20 * time.Second
	windowSlots = 8
	stateFresh  = 30 * time.Second
)

// take waits for the host's next request slot and books it.
func (b *leaseRun) take(ctx context.Context) (time.Time, error) {
	slot, err := b.takeFor(ctx, -1)
	return slot.Start, err
}

// takeFor is take for the request of the lease's URL i (-1: none, such as robots.txt), whose
// state (and its crawl's) comes with the slot.
func (b *leaseRun) takeFor(ctx context.Context, i int) (pacing.Slot, error) {
	var url *pacing.URLKey
	if i >= 0 {
		url = &pacing.URLKey{CrawlID: b.urls[i].CrawlID, Hash: b.urls[i].Hash}
	}
	for given := 0; ; {
		b.mu.Lock()
		if b.f.clock().Now().Before(b.res.DeferUntil) {
			b.mu.Unlock()
			return pacing.Slot{}, errDeferred
		}
		// The margin here too: when robots.txt's Crawl-delay raises the delay mid-lease, the
		// slot booked before it knew is closer than the new delay plus margin.
		gap := pacing.Gap(b.delay())
		wait := b.f.clock().Until(b.nextStartLocked())
		if i >= 0 && b.slotFarLocked() {
			// (Not robots.txt's hops, i < 0: a lease that ended between them would start
			// again from the first, for ever. They wait here, at most five delays.)
			b.mu.Unlock()
			return pacing.Slot{}, errSlotFar
		}
		if wait <= 0 {
			// The host's time is booked in Postgres — its schedule, and its address's when the
			// per-IP limit applies — so a retried lease and a stale attempt of it that has not
			// noticed yet share one schedule. Under the lease's lock, so this lease's own next
			// request is spaced from when this one really starts.
			slot, err := b.book(ctx, i, url, gap)
			if errors.Is(err, errWindowLater) {
				b.mu.Unlock()
				if err := clock.SleepUntil(ctx, b.f.clock(), slot.Start); err != nil {
					return pacing.Slot{}, err
				}
				continue
			}
			if err != nil {
				b.mu.Unlock()
				return pacing.Slot{}, err
			}
			start := slot.Start
			b.next = start.Add(gap)
			b.res.LastRequestAt = start
			b.res.Requests++
			b.inFlight++
			b.res.PeakInFlight = max(b.res.PeakInFlight, b.inFlight)
			b.mu.Unlock()
			if err := clock.SleepUntil(ctx, b.f.clock(), start); err != nil {
				b.endRequest()
				return pacing.Slot{}, err
			}
			// Slots are booked a delay plus a margin apart. A request that would leave more
			// than half the margin after its slot (this process was descheduled: an overloaded
			// machine, a stalled GC) could land too close to the next slot's request, which
			// may leave on time from another worker: give the slot up and book a new one. A
			// few times at most: with a delay of milliseconds, booking alone can take longer
			// than the tolerance, and the request's late departure still pushes the next slot.
			if late := b.f.clock().Since(start); late > b.tolerance() && given < maxLateSlots {
				given++
				b.mu.Lock()
				b.res.Requests--
				b.res.LateSlots++
				b.inFlight--
				b.mu.Unlock()
				continue
			}
			return slot, nil
		}
		b.mu.Unlock()
		t := time.NewTimer(min(wait, 5*time.Second))
		select {
		case <-ctx.Done():
			t.Stop()
			return pacing.Slot{}, ctx.Err()
		case <-t.C:
		}
	}
}

// book finds the start of the request of URL i (url; nil for none) in the lease's window of
// the host's time, booking more of it when the window is over or its state of the URL is
// no longer fresh. A host whose address is shared (the per-IP limit applies) books
// each request on both schedules, as before windows. Callers hold b.mu.
func (b *leaseRun) book(ctx context.Context, i int, url *pacing.URLKey, gap time.Duration) (pacing.Slot, error) {
	now := b.f.clock().Now()
	if b.ip.IsValid() {
		return b.f.Schedule.Book(ctx, b.slot(), b.delay(), b.ip, now, url)
	}
	w := &b.window
	st, known := pacing.WindowState{}, url == nil
	if url != nil {
		st, known = w.States[pacing.WindowKey(*url)]
		known = known && b.fresh(st, now)
	}
	// The window holds a request starting at max(now, its start) when that start is a whole
	// gap before its end: whoever books next starts at the end or later.
	room := !clock.Later(now, w.Start).Add(gap).After(w.End)
	if !known && room {
		// Time in hand, states not: read them alone. (Booking more would put this window
		// after whoever booked since, who may be waiting for theirs in turn.)
		epoch, _ := b.f.Control.Epoch()
		states, err := b.f.Frontier.WindowStates(ctx, b.ahead(i), epoch)
		if err != nil {
			return pacing.Slot{}, err
		}
		if w.States == nil {
			w.States = states
		} else {
			maps.Copy(w.States, states)
		}
		st, known = w.States[pacing.WindowKey(*url)], true
	}
	if !known || !room {
		// A request of no URL (robots.txt) books for the URLs after it too. A lease, which
		// claims more as it goes, books as far ahead as a window goes.
		if url == nil {
			i = b.cursor
		}
		urls := b.ahead(i)
		n := min(windowSlots, max(int(windowAhead/gap), 1))
		epoch, _ := b.f.Control.Epoch()
		nw, err := b.f.Schedule.BookWindow(ctx, b.slot(), b.delay(), n, now, w.Mark, urls, epoch)
		if err != nil {
			return pacing.Slot{}, err
		}
		if !nw.Continues {
			// After someone else's booking: a window of its own, and only what it just read
			// (someone else may have fetched what this lease's claims said was claimed).
			*w = nw
			if nw.Start.Sub(now) > gap {
				// Someone holds the host's time until then: a stale attempt of this lease
				// still fetching, perhaps. What was read now may not hold when it ends: wait
				// for the window, then read again.
				w.States = map[string]pacing.WindowState{}
				return pacing.Slot{Start: nw.Start}, errWindowLater
			}
		} else {
			w.End, w.Mark = nw.End, nw.Mark // continues this one
			maps.Copy(w.States, nw.States)
		}
		if url != nil {
			st = w.States[pacing.WindowKey(*url)]
		}
	}
	if url != nil {
		delete(w.States, pacing.WindowKey(*url))
	}
	return pacing.Slot{Start: clock.Later(now, w.Start), URLState: st.URL, CrawlState: st.Crawl}, nil
}

// fresh says whether a URL state the lease holds may stand for a read now: read within
// stateFresh, and no crawl control told of since.
func (b *leaseRun) fresh(st pacing.WindowState, now time.Time) bool {
	return now.Sub(st.At) < stateFresh && b.f.Control.Fresh(st.Epoch)
}

// claimedNow notes the states of URLs the lease has just claimed (with the control epoch
// from before the claim): claimed, in a running crawl. A window need not read them again
// while they are fresh.
func (b *leaseRun) claimedNow(claimed []crawl.Claimed, epoch uint64) {
	now := b.f.clock().Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.window.States == nil {
		b.window.States = make(map[string]pacing.WindowState, len(claimed))
	}
	for _, u := range claimed {
		b.window.States[pacing.WindowKey(pacing.URLKey{CrawlID: u.CrawlID, Hash: u.Hash})] =
			pacing.WindowState{URL: crawl.URLClaimed, Crawl: crawl.CrawlRunning, At: now, Epoch: epoch}
	}
}

// ahead names URL i and the lease's next unfinished URLs after it, as many as a window holds
// at most. Callers hold b.mu.
func (b *leaseRun) ahead(i int) []pacing.URLKey {
	if i < 0 {
		return nil
	}
	var urls []pacing.URLKey
	for j := i; j < len(b.urls) && len(urls) < windowSlots; j++ {
		if j == i || !b.finished[j] {
			urls = append(urls, pacing.URLKey{CrawlID: b.urls[j].CrawlID, Hash: b.urls[j].Hash})
		}
	}
	return urls
}

// settle says where the host's next booking goes when the lease ends: a delay (as it is now)
// after its last request left and after that request's answer came, and not before a
// Retry-After ends. end is the Mark of the lease's window (zero: it booked none). ok is false
// when there is nothing to move: no window and no Retry-After, or the window's end is already
// there.
func (b *leaseRun) settle() (end, next time.Time, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	end = b.window.Mark
	next = b.nextStartLocked()
	// A Retry-After binds every worker, so it goes to the host's row on the database's clock
	// too: the host workflow's timer alone runs on the Temporal server's clock, and the next
	// lease may run on a machine whose clock is behind this one's.
	next = clock.Later(next, b.res.DeferUntil)
	return end, next, (!end.IsZero() && !next.Equal(b.window.End)) || !b.res.DeferUntil.IsZero()
}

// nextStartLocked is the earliest start of the lease's next request: its own pacing (b.next),
// and a delay as it is now, plus the margin, after its last request left. Callers hold b.mu.
func (b *leaseRun) nextStartLocked() time.Time {
	return clock.Later(b.next, b.res.LastRequestAt.Add(pacing.Gap(b.delay())))
}

// tolerance is how late after its slot a request may leave: half the margin slots are booked
// apart by.
func (b *leaseRun) tolerance() time.Duration { return b.f.Schedule.Tolerance(b.delay(), b.ip) }

// sent returns the hook told when the request of the slot at start really left. One that left
// later than the tolerance (a slow dial, a process descheduled after take's check) pushes the
// host's and address's next slots out to a full delay after its departure, so the server still
// sees the delay between it and the next request, from this worker or another.
func (b *leaseRun) sent(ctx context.Context, start time.Time) func(time.Time) {
	return func(at time.Time) {
		at = b.f.clock().Of(at) // the trace hook reads the machine's clock
		b.mu.Lock()
		d := b.delay()
		if at.Sub(start) <= b.tolerance() {
			b.mu.Unlock()
			return
		}
		b.res.LateDepartures++
		hostNext := at.Add(pacing.Gap(d))
		b.next = clock.Later(b.next, hostNext)
		// Within the lease's window, whoever books next starts at its end already.
		inWindow := !b.ip.IsValid() && !hostNext.After(b.window.End)
		b.mu.Unlock()
		if inWindow {
			return
		}
		go func() {
			ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			if err := b.f.Schedule.Sent(ctx, b.slot(), d, b.ip, at); err != nil {
				b.f.Hooks.log().Warn("push a late request's next slot", "host", b.in.Host, "error", err)
			}
		}()
	}
}

// otherHost is the authority of target when it is not host's ("" when it is, or cannot say).
func (f *Stage) otherHost(host, target string) string {
	n, err := f.Crawls.Norm.Normalize(target)
	if err != nil {
		return ""
	}
	if a := urlnorm.Authority(n); a != host {
		return a
	}
	return ""
}

// takeOtherHost books the next request slot of another host, a delay after its last request
// start whoever made it, and waits for it.
func (f *Stage) takeOtherHost(ctx context.Context, host string, delay time.Duration) (time.Time, error) {
	slot, err := f.Schedule.Book(ctx, host, delay, f.Schedule.IPOf(ctx, host), f.clock().Now(), nil)
	if err != nil {
		return time.Time{}, err
	}
	return slot.Start, clock.SleepUntil(ctx, f.clock(), slot.Start)
}

// slot is the name of the schedule the lease books on (slotKey; its host before its first
// chunk is paced).
func (b *leaseRun) slot() string {
	if b.slotKey == "" {
		return b.in.Host
	}
	return b.slotKey
}
