package activities

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"

	"github.com/trawlerdev/trawler/internal/fetching"
)

// A fetch lease does not end because one heartbeat met a busy Temporal server.
//
// Why: the SDK gives a heartbeat's RPC the worker's heartbeat throttle to succeed in (a second
// on the fetch worker, so that a beat telling of a pause reaches the server at once) and, when
// it fails on an error the SDK retries (ResourceExhausted "BusyWorkflow" while the host's
// workflow is locked by another update, Unavailable), cancels the activity's context as if the
// attempt had timed out. It has not: the server keeps the attempt for the heartbeat timeout
// (30 s) after its last beat. A lease ended that way failed ("context canceled", often in its
// last write) and Temporal retried it after a backoff doubling up to 2 minutes, its host idle
// meanwhile. On the hour-long bench with Temporal on PostgreSQL this was four failed leases for
// every one that completed, and hosts at their 7th and 8th attempt after 25 minutes.
//
// So a lease runs on leaseContext: the activity's values and deadline, and its end when the
// server asked for it (a cancel, a pause or reset of the activity, the attempt gone) or the
// worker stops, but not when a beat failed on a busy server. Then the lease beats again at
// once (the failed beat's progress has not reached the server) and ends at the end of its
// chunk, as if its time were up: a completed lease, the host's next one scheduled at once.

// busyServer says whether the SDK ended an activity's context for a heartbeat that failed on
// an error it takes for passing: a busy or briefly unreachable server, or a slow answer.
func busyServer(cause error) bool {
	var (
		exhausted   *serviceerror.ResourceExhausted
		unavailable *serviceerror.Unavailable
		aborted     *serviceerror.Aborted
		internal    *serviceerror.Internal
		late        *serviceerror.DeadlineExceeded
	)
	return errors.As(cause, &exhausted) || errors.As(cause, &unavailable) || errors.As(cause, &aborted) ||
		errors.As(cause, &internal) || errors.As(cause, &late)
}

// rebeatsAfter are when a lease beats again after a beat failed on a busy server, each after
// the one before: within the heartbeat timeout, as the server may still be busy at the first.
var rebeatsAfter = []time.Duration{0, 4 * time.Second, 5 * time.Second}

// recordBeat is a lease's heartbeat to Temporal.
func recordBeat(ctx context.Context, r fetching.LeaseBeat) { activity.RecordHeartbeat(ctx, r) }

// leaseContext returns the context a fetch lease runs on (see above), a channel closed when a
// heartbeat failed on a busy server (the lease should end at the end of its chunk), the
// lease's heartbeat through record (it remembers the last progress, which a beat after a
// failed one sends again), and stop, to call when the lease is done.
func leaseContext(ctx context.Context, record func(context.Context, fetching.LeaseBeat)) (lctx context.Context, busy <-chan struct{}, beat func(fetching.LeaseBeat), stop func()) {
	base, endDeadline := context.WithoutCancel(ctx), context.CancelFunc(func() {})
	if d, ok := ctx.Deadline(); ok {
		base, endDeadline = context.WithDeadline(base, d)
	}
	lctx, cancel := context.WithCancelCause(base)
	var last atomic.Pointer[fetching.LeaseBeat]
	beat = func(r fetching.LeaseBeat) {
		last.Store(&r)
		record(lctx, r)
	}
	failed := make(chan struct{})
	unwatch := context.AfterFunc(ctx, func() {
		cause := context.Cause(ctx)
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return // (the lease's context has the same deadline: it ends as the activity's did)
		}
		if !busyServer(cause) {
			cancel(cause)
			return
		}
		close(failed)
		if activity.IsActivity(lctx) {
			activity.GetLogger(lctx).Warn("fetch lease: a heartbeat failed on a busy Temporal server; the lease beats again and ends after its chunk", "error", cause)
		}
		go func() {
			for _, after := range rebeatsAfter {
				t := time.NewTimer(after)
				select {
				case <-lctx.Done():
					t.Stop()
					return
				case <-t.C:
				}
				if r := last.Load(); r != nil {
					beat(*r)
				}
			}
		}()
	})
	return lctx, failed, beat, func() { unwatch(); cancel(nil); endDeadline() }
}

// eitherClosed returns a channel closed when a or b is (nil channels never are), until done.
func eitherClosed(done <-chan struct{}, a, b <-chan struct{}) <-chan struct{} {
	out := make(chan struct{})
	go func() {
		select {
		case <-a:
		case <-b:
		case <-done:
			return
		}
		close(out)
	}()
	return out
}
