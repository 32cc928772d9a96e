// Package clock owns a process's reading of the time for the decisions it shares with other
// processes (when a host's next request may leave). In production it is the machine's clock;
// a test sets one off by a skew to play a worker whose clock runs wrong.
package clock

import (
	"context"
	"time"
)

// Clock is the machine's clock set off by Skew (zero: the machine's clock as it is).
type Clock struct {
	Skew time.Duration
}

// Now is the time on this clock. It keeps the machine's monotonic reading, so durations
// between two readings are exact whatever the skew.
func (c Clock) Now() time.Time { return time.Now().Add(c.Skew) }

// Until is how long until t on this clock.
func (c Clock) Until(t time.Time) time.Duration { return t.Sub(c.Now()) }

// Since is how long since t on this clock.
func (c Clock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// Later is the later of two times.
func Later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// Of is what this clock read when the machine's clock read t (a time.Now() taken by code that
// does not know this clock, such as an HTTP trace hook).
func (c Clock) Of(t time.Time) time.Time { return t.Add(c.Skew) }

// SleepUntil waits until t on c, or until ctx ends (its error).
func SleepUntil(ctx context.Context, c Clock, t time.Time) error {
	d := c.Until(t)
	if d <= 0 {
		return nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// Every calls fn every d until the returned stop is called or ctx ends.
func Every(ctx context.Context, d time.Duration, fn func()) (stop func()) {
	return EveryAfter(ctx, d, d, fn)
}

// EveryAfter calls fn first after first, then every d, until the returned stop is called or
// ctx ends.
func EveryAfter(ctx context.Context, first, d time.Duration, fn func()) (stop func()) {
	done := make(chan struct{})
	go func() {
		t := time.NewTimer(first)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				fn()
				t.Reset(d)
			}
		}
	}()
	return func() { close(done) }
}
