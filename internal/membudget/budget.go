// Package membudget owns a worker process's memory budgets: the bytes of response bodies in
// flight (read, or read and not yet recorded) and the memory parsing pages takes. A caller
// waits for room in the budget; it is never refused for want of it, so a burst of large
// bodies slows a worker down instead of running it out of memory.
//
// A hold that grows while it reads (a body whose length is not known until its end) must not
// wait forever on holds that wait themselves: one hold at a time may overdraw the budget, by
// at most what it grows to (a body's cap, and its decoder's window). The others wait for it,
// or for room. So the bytes held never exceed the limit plus one hold's most, and every hold
// finishes.
package membudget

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
)

// Budget is a count of bytes callers hold, bounded by a limit. A nil *Budget has no bound:
// its holds are free, so a process that sets no budget pays nothing.
type Budget struct {
	name  string
	limit int64

	mu        sync.Mutex
	used      int64
	overdraft *Hold         // the one hold allowed past the limit (nil: none)
	growers   int           // holds waiting to grow: fresh takes let them go first
	queue     []*int64      // takes waiting, first come first served (a large one is not passed for ever)
	wake      chan struct{} // closed, and replaced, whenever bytes are given back

	waits atomic.Int64 // takes and grows that had to wait
	peak  atomic.Int64
}

var (
	allMu sync.Mutex
	all   []*Budget
)

// New returns a budget of limit bytes, listed under name for the metrics endpoint (All). A
// limit of 0 or less means no budget (nil).
func New(name string, limit int64) *Budget {
	if limit <= 0 {
		return nil
	}
	b := &Budget{name: name, limit: limit, wake: make(chan struct{})}
	allMu.Lock()
	all = append(all, b)
	allMu.Unlock()
	return b
}

// All lists the budgets made in this process, for the metrics endpoint.
func All() []*Budget {
	allMu.Lock()
	defer allMu.Unlock()
	return append([]*Budget(nil), all...)
}

// Name is the budget's name in metrics.
func (b *Budget) Name() string { return b.name }

// Limit is the budget's bound in bytes.
func (b *Budget) Limit() int64 { return b.limit }

// Held is how many bytes are held now.
func (b *Budget) Held() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// Peak is the most bytes held at once so far.
func (b *Budget) Peak() int64 { return b.peak.Load() }

// Waits counts the takes and grows that found no room and waited.
func (b *Budget) Waits() int64 { return b.waits.Load() }

// Hold is bytes taken from a budget, given back by Release. Its methods are safe on a nil
// Hold (from a nil Budget) and do nothing there.
type Hold struct {
	b    *Budget
	n    int64
	done bool
}

// Take waits until n bytes fit in the budget and holds them. A take larger than the whole
// budget waits until the budget is empty and then holds it all: it is slowed, never refused.
// Takes are served in the order they came (a large one is not passed for ever by small
// ones), after the holds waiting to grow. A take holds nothing while it waits, so takes
// cannot deadlock one another.
func (b *Budget) Take(ctx context.Context, n int64) (*Hold, error) {
	if b == nil {
		return nil, nil
	}
	n = min(max(n, 0), b.limit)
	b.mu.Lock()
	defer b.mu.Unlock()
	fits := func() bool { return b.used+n <= b.limit && b.growers == 0 }
	if len(b.queue) > 0 || !fits() {
		b.waits.Add(1)
		ticket := new(int64)
		b.queue = append(b.queue, ticket)
		for b.queue[0] != ticket || !fits() {
			if err := b.waitLocked(ctx); err != nil {
				b.leaveQueueLocked(ticket)
				return nil, fmt.Errorf("membudget: wait for %d bytes of the %s budget: %w", n, b.name, err)
			}
		}
		b.leaveQueueLocked(ticket)
	}
	b.used += n
	b.notePeakLocked()
	return &Hold{b: b, n: n}, nil
}

// waitLocked waits, b.mu released meanwhile, until bytes are given back or ctx ends.
func (b *Budget) waitLocked(ctx context.Context) error {
	wake := b.wake
	b.mu.Unlock()
	defer b.mu.Lock()
	select {
	case <-wake:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// leaveQueueLocked takes a ticket out of the queue; the next take in line may fit now.
func (b *Budget) leaveQueueLocked(ticket *int64) {
	for i, t := range b.queue {
		if t == ticket {
			b.queue = append(b.queue[:i], b.queue[i+1:]...)
			break
		}
	}
	b.wakeLocked()
}

// Grow adds n bytes to the hold, waiting while they do not fit and another hold overdraws
// the budget. The hold that finds no room and no overdraft becomes the overdraft and grows
// at once: the waits always end, as the overdraft never waits.
func (h *Hold) Grow(ctx context.Context, n int64) error {
	if h == nil || n <= 0 {
		return nil
	}
	b := h.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if h.done {
		return fmt.Errorf("membudget: grow of a released %s hold", b.name)
	}
	waiting := false
	for {
		if b.used+n <= b.limit || b.overdraft == h || b.overdraft == nil {
			if b.used+n > b.limit {
				b.overdraft = h
			}
			break
		}
		if !waiting {
			waiting = true
			b.growers++
			b.waits.Add(1)
		}
		if err := b.waitLocked(ctx); err != nil {
			b.stopGrowingLocked()
			return fmt.Errorf("membudget: wait to grow by %d bytes of the %s budget: %w", n, b.name, err)
		}
		if h.done { // released while it waited: nothing to grow
			b.stopGrowingLocked()
			return fmt.Errorf("membudget: grow of a released %s hold", b.name)
		}
	}
	if waiting {
		b.stopGrowingLocked()
	}
	h.n += n
	b.used += n
	b.notePeakLocked()
	return nil
}

// Release gives the hold's bytes back. It may be called more than once.
func (h *Hold) Release() {
	if h == nil {
		return
	}
	b := h.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if h.done {
		return
	}
	h.done = true
	b.used -= h.n
	h.n = 0
	if b.overdraft == h {
		b.overdraft = nil
	}
	b.wakeLocked()
}

// stopGrowingLocked counts a grower out; the last one out lets the takes it held back go.
func (b *Budget) stopGrowingLocked() {
	b.growers--
	if b.growers == 0 {
		b.wakeLocked()
	}
}

// wakeLocked wakes every waiter to look again.
func (b *Budget) wakeLocked() {
	close(b.wake)
	b.wake = make(chan struct{})
}

// Shrink gives back what the hold holds beyond n bytes (a body read, its buffer's spare
// room and its decoder's window no longer needed). The hold stays the overdraft, if it is
// one, until Release: so at most one hold is ever past the limit.
func (h *Hold) Shrink(n int64) {
	if h == nil {
		return
	}
	b := h.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if h.done || n >= h.n {
		return
	}
	n = max(n, 0)
	b.used -= h.n - n
	h.n = n
	b.wakeLocked()
}

// Bytes is how many bytes the hold holds.
func (h *Hold) Bytes() int64 {
	if h == nil {
		return 0
	}
	h.b.mu.Lock()
	defer h.b.mu.Unlock()
	return h.n
}

func (b *Budget) notePeakLocked() {
	if b.used > b.peak.Load() {
		b.peak.Store(b.used)
	}
}
