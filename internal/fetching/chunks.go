package fetching

import (
	"context"
	"time"

	"github.com/trawlerdev/trawler/internal/clock"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/failpoint"
	"github.com/trawlerdev/trawler/internal/pacing"
)

// A fetch lease is one fetch activity holding its host for up to LeaseFor: it claims the
// host's due URLs a chunk at a time (links that arrive meanwhile included), paces every
// request itself, and ends when the lease is up, the host runs dry, or the host asks to be
// left alone (Retry-After, repeated errors, gone). Its pages are left fetched for the crawl's
// processing, which claims them: the host workflow pays its events per lease, not per page.
const (
	// leaseDryWait is how long a lease whose host ran dry waits for links its own pages may
	// still yield (they are being processed meanwhile) before it ends.
	leaseDryWait = 20 * time.Second
	// leaseRecheck is how soon a dry lease whose pages are being processed looks again for
	// new due URLs; each look finding none doubles the wait, up to leaseRecheckMax. Most
	// pages are processed within a second or two (their links come soon), the rest can take
	// many: a fixed second cost a Postgres round trip a second per waiting lease, more than
	// one per page fetched. While the fetcher hears of admissions (Stage.Control), they wake
	// a waiting lease, which then looks only every leaseRecheckMax.
	leaseRecheck    = time.Second
	leaseRecheckMax = 4 * time.Second
	// leaseErrors is how many failures in a row end a lease: the host workflow backs off.
	leaseErrors = 3
)

// leaseOver says whether the lease must end before claiming more: its time is up, or the
// host asked to be left alone.
func (b *leaseRun) leaseOver(ctx context.Context) bool {
	return b.timeUp() || b.mustEnd(ctx)
}

// timeUp says the lease has held its host for LeaseFor.
func (b *leaseRun) timeUp() bool {
	return b.f.clock().Since(b.began) >= b.in.LeaseFor
}

// mustEnd says the lease must end whatever its time: it was cancelled or its worker is
// stopping, or the host asked to be left alone.
func (b *leaseRun) mustEnd(ctx context.Context) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return ctx.Err() != nil || !b.res.DeferUntil.IsZero() || b.res.ConsecutiveErrors >= leaseErrors ||
		b.res.Gone != "" || closed(b.f.Stopping)
}

// closed says whether ch is closed (false for nil).
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// nextChunk waits until no request is in flight, then replaces the lease's finished chunk of
// URLs with the next due ones, so the lease holds one chunk's claims however long it runs.
// When none is due it waits for a URL due within a few seconds, or for links from pages it
// fetched that are still being processed, at most leaseDryWait. It returns false when the
// lease should end.
func (b *leaseRun) nextChunk(ctx context.Context) (bool, error) {
	b.drain()
	if b.slotFar() {
		return false, nil // a long Crawl-delay: the host workflow's durable timer waits it out
	}
	owner := crawl.ChunkOwner(b.in.Owner)
	owners := crawl.LeaseOwners(b.in.Owner)
	dryFrom := b.f.clock().Now()
	recheck := leaseRecheck
	// Admissions of the host's URLs are told as they commit: a lease waiting for its own
	// pages' links claims them then, and polls only for whether it should go on waiting.
	due, stopWaiting := b.f.Control.WaitDue(b.in.Host)
	defer stopWaiting()
	if _, live := b.f.Control.Epoch(); live {
		recheck = leaseRecheckMax
	}
	claim := true // look by claiming: the chunk just finished may have left URLs due
	for !b.leaseOver(ctx) {
		var next *time.Time
		var awaiting int
		if claim && !b.nearSlot(ctx) {
			return false, nil
		}
		if claim {
			// Quietly: no admission need wake the host workflow while its lease runs. Found
			// nothing, the claim says in the same round trip what the cheap look below would;
			// and with nothing left to wait for the lease ends on it, its host left waiting as
			// by claimChunk.
			epoch, _ := b.f.Control.Epoch()
			res, err := b.f.Frontier.ClaimInLease(ctx, b.in.Host, owner, owners, b.in.Chunk, b.in.ClaimTTL, b.f.clock().Now(), pacing.InLeaseWait)
			if err != nil {
				return false, err
			}
			if len(res.URLs) > 0 {
				failpoint.Hit(failpoint.TopUpClaimed)
				b.claimedNow(res.URLs, epoch)
				if err := b.pace(ctx, res.URLs); err != nil {
					return false, err
				}
				b.mu.Lock()
				b.urls = res.URLs
				b.finished = make([]bool, len(res.URLs))
				b.mu.Unlock()
				return true, nil
			}
			if res.Waiting {
				return b.takeChunk(ctx, nil, res.Next, epoch), nil
			}
			next, awaiting = res.Next, res.Awaiting
		} else {
			// Dry: one cheap look (no claim, no transaction) at when the next URL is due and
			// whether pages of this lease still await processing (their links may be for us).
			var err error
			if next, awaiting, err = b.f.Frontier.HostDue(ctx, b.in.Host, owners); err != nil {
				return false, err
			}
		}
		var wait time.Duration
		switch {
		case next != nil && b.f.clock().Until(*next) <= pacing.InLeaseWait:
			wait = max(b.f.clock().Until(*next), 0)
			if claim && wait == 0 {
				wait = 200 * time.Millisecond // due, yet the claim found nothing (locked by an admission): soon again
			}
			claim = true
		case awaiting > 0 && b.f.clock().Since(dryFrom) < leaseDryWait:
			// Its own pages' links are on their way: look again soon (leaseRecheck, backing
			// off), with the cheap query, not a claim (a link-driven host's pace depends on
			// how soon it sees them).
			wait, claim = recheck, false
			recheck = min(2*recheck, leaseRecheckMax)
		default:
			return b.claimChunk(ctx, owner)
		}
		if wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return false, nil
			case <-due:
				t.Stop()
				claim = true
			case <-t.C:
			}
		}
	}
	if !claim && !b.mustEnd(ctx) {
		// The time ran out while the lease waited only for its own pages' links.
		return b.endWaiting(ctx)
	}
	return false, nil
}

// endWaiting ends a lease whose time ran out while it waited only for links its own pages may
// yield, as a lease that ran dry ends: a last look leaves the host waiting, so those links,
// when they come, wake the host workflow (a new run when this one has ended), rather than
// another lease being run only to wait for them (issue 49: on the long-tailed bench web, 23%
// to 44% of sampled host runs were a short local lease and then an activity lease that
// fetched nothing).
//
// The look claims nothing, since the time is up. A URL due later is told as NextDue (the host
// workflow waits for it on a timer); one due within pacing.InLeaseWait (links admitted since
// the lease last looked) ends the lease as its time does, not dry, so the next lease starts at
// once (an admission meanwhile may signal the host: the flag is left set).
func (b *leaseRun) endWaiting(ctx context.Context) (bool, error) {
	epoch, _ := b.f.Control.Epoch()
	_, next, err := b.f.Frontier.ClaimAs(ctx, b.in.Host, crawl.ChunkOwner(b.in.Owner), 0, b.in.ClaimTTL, b.f.clock().Now())
	if err != nil || (next != nil && b.f.clock().Until(*next) <= pacing.InLeaseWait) {
		return false, err
	}
	return b.takeChunk(ctx, nil, next, epoch), nil
}

// claimAhead is how long before the host's next request may leave a lease claims the URLs for
// it.
const claimAhead = 100 * time.Millisecond

// slotFar says the host's next request may not leave before a lease would stop waiting for it
// (errSlotFar), now that the lease has made one.
func (b *leaseRun) slotFar() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.slotFarLocked()
}

func (b *leaseRun) slotFarLocked() bool {
	return b.res.Requests > 0 && b.f.clock().Until(b.nextStartLocked()) > pacing.InLeaseWait
}

// nearSlot waits until shortly before the host's next request may leave (at most pacing.InLeaseWait):
// a claim any sooner gains nothing, and the URLs that fall due meanwhile — links from the
// lease's own pages, processed as it waits — join the same claim instead of costing one each.
// It says false when ctx ends.
func (b *leaseRun) nearSlot(ctx context.Context) bool {
	b.mu.Lock()
	slot := b.nextStartLocked()
	b.mu.Unlock()
	c := b.f.clock()
	at := slot.Add(-claimAhead)
	if limit := c.Now().Add(pacing.InLeaseWait); at.After(limit) {
		at = limit
	}
	return clock.SleepUntil(ctx, c, at) == nil
}

// claimChunk is a lease's claim of its first chunk (under the lease's owner, so a retry takes
// back what its dead predecessor held, its own claims first) and its last
// before it ends dry (under its chunks' owner). Unlike the quiet claims between, finding
// nothing leaves the host waiting, so the next admission of its URLs wakes the host workflow,
// and URLs admitted just before are still found. It says false when none is due.
func (b *leaseRun) claimChunk(ctx context.Context, owner string) (bool, error) {
	epoch, _ := b.f.Control.Epoch()
	claimed, next, err := b.f.Frontier.ClaimAs(ctx, b.in.Host, owner, b.in.Chunk, b.in.ClaimTTL, b.f.clock().Now())
	if err != nil {
		return false, err
	}
	if err := b.pace(ctx, claimed); err != nil {
		return false, err
	}
	return b.takeChunk(ctx, claimed, next, epoch), nil
}

// takeChunk makes claimed the lease's chunk, or, when it is empty, marks the lease dry.
func (b *leaseRun) takeChunk(ctx context.Context, claimed []crawl.Claimed, next *time.Time, epoch uint64) bool {
	b.mu.Lock()
	if len(claimed) == 0 {
		b.res.Dry, b.res.NextDue = true, next
		b.mu.Unlock()
		return false
	}
	b.urls = claimed
	b.finished = make([]bool, len(claimed))
	b.mu.Unlock()
	b.claimedNow(claimed, epoch)
	failpoint.Hit(failpoint.ClaimCommitted)
	return true
}

// end settles the lease's window of the host's time (settle), when it booked one.
func (b *leaseRun) end(ctx context.Context) error {
	if end, next, settle := b.settle(); settle {
		return b.f.Schedule.Settle(ctx, b.slot(), end, next)
	}
	return nil
}
