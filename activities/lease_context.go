package activities

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/trawlerdev/trawler/internal/fetching"
)

// A fetch lease sends its heartbeats itself, by its task token, not through the SDK's
// activity.RecordHeartbeat.
//
// Why: the SDK gives a heartbeat's RPC the worker's heartbeat throttle to succeed in (a second
// on the fetch worker, so that a beat telling of a pause reaches the server at once), and when
// it fails on an error the SDK retries (ResourceExhausted "BusyWorkflow" while the host's
// workflow is locked by another update, Unavailable) it cancels the activity as if the attempt
// had timed out. A busy Temporal server often takes more than a second: on the hour-long bench
// with Temporal on PostgreSQL, leases failed ("context canceled") two to fifteen times as often
// as they completed and waited out Temporal's retry backoff, up to 2 minutes, their hosts
// idle; letting the lease go on instead only turned those into heartbeat timeouts, as its next
// beats met the same second (BENCHMARKS.md, 2026-11-28 07:23 and 07:45).
//
// Sent here, a beat has beatRPCTimeout to land (the gRPC client retries within it), is never
// held back (a told pause is sent at once), and a failed one is sent again soon. Its answer
// still ends the lease when the server asks: a cancel (the lease returns a CanceledError, so
// the attempt is reported canceled) or the attempt gone.

// beatRPCTimeout is how long one heartbeat may take to land: within the lease's heartbeat
// timeout (30 s) with room for a second try before it.
const beatRPCTimeout = 10 * time.Second

// rebeatAfter is when a beat that did not land is sent again.
var rebeatAfter = 2 * time.Second

// heartbeater sends an activity's heartbeat by task token (client.Client does).
type heartbeater interface {
	RecordActivityHeartbeat(ctx context.Context, taskToken []byte, details ...any) error
}

var _ heartbeater = client.Client(nil)

// warner logs a warning (the activity's logger).
type warner interface {
	Warn(msg string, keyvals ...any)
}

// leaseBeats is one lease's heartbeat. beat is safe for concurrent use; beats are sent in the
// order they were made, the newest replacing any still waiting.
type leaseBeats struct {
	hb     heartbeater
	token  []byte
	cancel context.CancelCauseFunc // ends the lease's context when the server asks
	log    warner

	sending sync.Mutex // one beat at a time, in order
}

// leaseContext returns the context a fetch lease runs on, a child of the activity's that ends
// when a heartbeat's answer says the server wants the lease to end, and its heartbeat, sent by
// hb with the activity's task token. stop releases the context.
func leaseContext(ctx context.Context, hb heartbeater, token []byte, log warner) (lctx context.Context, beat func(fetching.LeaseBeat), stop func()) {
	lctx, cancel := context.WithCancelCause(ctx)
	b := &leaseBeats{hb: hb, token: token, cancel: cancel, log: log}
	return lctx, func(r fetching.LeaseBeat) { b.beat(lctx, r) }, func() { cancel(nil) }
}

// beat sends r, and once more after rebeatAfter if it did not land on a passing error.
func (b *leaseBeats) beat(ctx context.Context, r fetching.LeaseBeat) {
	b.sending.Lock()
	defer b.sending.Unlock()
	for try := 0; try < 2 && ctx.Err() == nil; try++ {
		if try > 0 {
			t := time.NewTimer(rebeatAfter)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), beatRPCTimeout)
		err := b.hb.RecordActivityHeartbeat(rctx, b.token, r)
		cancel()
		switch {
		case err == nil:
			return
		case temporal.IsCanceledError(err) || ended(err):
			b.cancel(err) // the server asked for the lease's end, or has forgotten the attempt
			return
		}
		if b.log != nil {
			b.log.Warn("fetch lease: a heartbeat did not land", "try", try+1, "error", err)
		}
	}
}

// ended says whether a heartbeat's error means the attempt is over on the server's side: gone
// (timed out, completed elsewhere), its namespace gone, or paused or reset by an operator.
func ended(err error) bool {
	var (
		notFound *serviceerror.NotFound
		nsGone   *serviceerror.NamespaceNotFound
		nsOff    *serviceerror.NamespaceNotActive
	)
	return errors.As(err, &notFound) || errors.As(err, &nsGone) || errors.As(err, &nsOff) ||
		errors.Is(err, activity.ErrActivityPaused) || errors.Is(err, activity.ErrActivityReset)
}

// leaseOutcome is what FetchBatch reports for a lease that ended with err on lctx: a
// CanceledError when the server asked for the end (so the SDK reports the attempt canceled,
// not failed), else err.
func leaseOutcome(lctx context.Context, err error) error {
	if err != nil && temporal.IsCanceledError(context.Cause(lctx)) {
		return temporal.NewCanceledError()
	}
	return err
}
