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
// Sent here, a beat has up to beatRPCTimeout to land (the gRPC client retries within it), is
// never held back (a told pause is sent at once), and one that did not land is sent again
// soon. Its answer still ends the lease when the server asks: a cancel (reported canceled, by
// task token too: the SDK reports a cancel only when its own heartbeat brought it), the
// attempt gone, an operator's pause or reset, an error that will not pass. And a lease whose
// beats have not landed for nearly its heartbeat timeout stops by itself, before the server
// retries it elsewhere under the same owner (two attempts of one host's lease at once).

// beatRPCTimeout is the most one heartbeat may take to land.
const beatRPCTimeout = 10 * time.Second

// rebeatAfter is when a beat that did not land is sent again; beatMargin is how long before
// its heartbeat timeout a lease whose beats have not landed stops.
var rebeatAfter, beatMargin = 2 * time.Second, 3 * time.Second

// errBeatsLost ends a lease whose heartbeats have not landed for nearly its heartbeat timeout.
var errBeatsLost = errors.New("activities: the fetch lease's heartbeats have not reached Temporal for nearly its heartbeat timeout; it stops before the server retries it")

// heartbeater sends an activity's heartbeat, and completes it, by task token (client.Client
// does).
type heartbeater interface {
	RecordActivityHeartbeat(ctx context.Context, taskToken []byte, details ...any) error
	CompleteActivity(ctx context.Context, taskToken []byte, result any, err error) error
}

var _ heartbeater = client.Client(nil)

// warner logs a warning (the activity's logger).
type warner interface {
	Warn(msg string, keyvals ...any)
}

// leaseBeats is one lease's heartbeat. beat is safe for concurrent use; beats go one at a time.
type leaseBeats struct {
	hb      heartbeater
	token   []byte
	timeout time.Duration           // the lease's heartbeat timeout (0: none, no watch)
	cancel  context.CancelCauseFunc // ends the lease's context
	log     warner

	sending sync.Mutex // one beat at a time, in order
	mu      sync.Mutex
	landed  time.Time   // when the last beat that landed was sent (the lease's start at first)
	watch   *time.Timer // ends the lease at deadlineLocked
}

// leaseContext returns the context a fetch lease runs on — a child of the activity's that ends
// when a heartbeat's answer says the server wants the lease to end, or when no beat has landed
// for timeout less beatMargin — and its heartbeat, sent by hb with the activity's task token.
// stop releases the context.
func leaseContext(ctx context.Context, hb heartbeater, token []byte, timeout time.Duration, log warner) (lctx context.Context, beat func(fetching.LeaseBeat), stop func()) {
	lctx, cancel := context.WithCancelCause(ctx)
	b := &leaseBeats{hb: hb, token: token, timeout: timeout, cancel: cancel, log: log, landed: time.Now()}
	if timeout > 0 {
		b.watch = time.AfterFunc(time.Until(b.deadlineLocked()), func() { cancel(errBeatsLost) })
	}
	return lctx, func(r fetching.LeaseBeat) { b.beat(lctx, r) }, func() {
		if b.watch != nil {
			b.watch.Stop()
		}
		cancel(nil)
	}
}

// deadlineLocked is when the watch ends the lease unless a beat lands first: the heartbeat
// timeout after the last beat that landed, less beatMargin (a third of a timeout too short for
// it). Callers hold b.mu, or own b alone.
func (b *leaseBeats) deadlineLocked() time.Time {
	return b.landed.Add(b.timeout - min(beatMargin, b.timeout/3))
}

// left is how long the lease may still go without a beat landing (a day without a watch).
func (b *leaseBeats) left() time.Duration {
	if b.timeout <= 0 {
		return 24 * time.Hour
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return time.Until(b.deadlineLocked())
}

// landedAt notes that a beat sent at sent landed, which moves the watch.
func (b *leaseBeats) landedAt(sent time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if sent.After(b.landed) {
		b.landed = sent
	}
	if b.watch != nil {
		b.watch.Reset(time.Until(b.deadlineLocked()))
	}
}

// beat sends r, and once more after rebeatAfter if it did not land on a passing error, each
// try within what is left before the watch ends the lease.
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
		budget := min(beatRPCTimeout, b.left())
		if budget <= 0 {
			return
		}
		sent := time.Now()
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), budget)
		err := b.hb.RecordActivityHeartbeat(rctx, b.token, r)
		cancel()
		switch {
		case err == nil:
			b.landedAt(sent)
			return
		case !passing(err):
			b.cancel(err) // the server asked for the lease's end, forgot the attempt, or refuses the beat
			return
		}
		if b.log != nil {
			b.log.Warn("fetch lease: a heartbeat did not land", "try", try+1, "error", err)
		}
	}
}

// passing says whether a heartbeat's error may pass: a busy or briefly unreachable server, or
// an answer later than the beat's budget. Anything else (a cancel, the attempt gone, an
// operator's pause or reset, a refused request) ends the lease.
func passing(err error) bool {
	var (
		exhausted   *serviceerror.ResourceExhausted
		unavailable *serviceerror.Unavailable
		late        *serviceerror.DeadlineExceeded
		aborted     *serviceerror.Aborted
		internal    *serviceerror.Internal
		dropped     *serviceerror.Canceled
	)
	if temporal.IsCanceledError(err) || errors.Is(err, activity.ErrActivityPaused) || errors.Is(err, activity.ErrActivityReset) {
		return false
	}
	return errors.As(err, &exhausted) || errors.As(err, &unavailable) || errors.As(err, &late) || errors.As(err, &aborted) ||
		errors.As(err, &internal) || errors.As(err, &dropped) || errors.Is(err, context.DeadlineExceeded)
}

// leaseOutcome is what FetchBatch returns for a lease that ended with err on lctx. When the
// server asked for the end with a cancel, the attempt is reported canceled by task token and
// the SDK told the result is sent (it reports a cancel only when its own heartbeat brought
// it); if that report fails, err goes back as the SDK would send it.
func leaseOutcome(ctx, lctx context.Context, hb heartbeater, token []byte, err error) error {
	if err == nil || !temporal.IsCanceledError(context.Cause(lctx)) {
		return err
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), beatRPCTimeout)
	defer cancel()
	if cerr := hb.CompleteActivity(rctx, token, nil, temporal.NewCanceledError()); cerr != nil {
		return err
	}
	return activity.ErrResultPending
}
