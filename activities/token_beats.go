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

	"github.com/trawlerdev/trawler/internal/clock"
	"github.com/trawlerdev/trawler/internal/crawl"
)

// A long activity — a fetch lease, a crawl's processing run — sends its heartbeats itself, by
// its task token, not through the SDK's activity.RecordHeartbeat.
//
// Why: the SDK gives a heartbeat's RPC the worker's heartbeat throttle to succeed in (a second
// on the fetch worker, so that a beat telling of a pause reaches the server at once; what
// TRAWLER_HEARTBEAT_MAX says elsewhere), and when it fails on an error the SDK retries
// (ResourceExhausted "BusyWorkflow" while the workflow is locked by another update,
// Unavailable) it cancels the activity as if the attempt had timed out. A busy Temporal server
// often takes more than a second: on the hour-long bench with Temporal on PostgreSQL, leases
// failed ("context canceled") two to fifteen times as often as they completed and waited out
// Temporal's retry backoff, up to 2 minutes, their hosts idle; letting the lease go on instead
// only turned those into heartbeat timeouts, as its next beats met the same second
// (BENCHMARKS.md, 2026-11-28 07:23 and 07:45). A crawl's processing run failed the same way,
// and threw away the batches it had in hand (2026-11-28 10:11).
//
// Sent here, a beat has up to beatRPCTimeout to land (the gRPC client retries within it), is
// never held back (a told pause is sent at once), and one that did not land is sent again
// soon. Its answer still ends the activity when the server asks: a cancel (reported canceled,
// by task token too: the SDK reports a cancel only when its own heartbeat brought it), the
// attempt gone (but for a crawl's processing run: see beating), an operator's pause or reset,
// an error that will not pass. And an activity
// whose beats have not landed for nearly its heartbeat timeout stops by itself, before the
// server retries it elsewhere under the same owner (two attempts of one host's lease at once).

// beatRPCTimeout is the most one heartbeat may take to land.
const beatRPCTimeout = 10 * time.Second

// rebeatAfter is when a beat that did not land is sent again; beatMargin is how long before
// its heartbeat timeout an activity whose beats have not landed stops.
var rebeatAfter, beatMargin = 2 * time.Second, 3 * time.Second

// errBeatsLost ends an activity whose heartbeats have not landed for nearly its heartbeat
// timeout.
var errBeatsLost = errors.New("activities: the activity's heartbeats have not reached Temporal for nearly its heartbeat timeout; it stops before the server retries it")

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

// tokenBeats is one activity's heartbeat. beat is safe for concurrent use; beats go one at a time.
type tokenBeats struct {
	hb      heartbeater
	token   []byte
	timeout time.Duration           // the lease's heartbeat timeout (0: none, no watch)
	outlive bool                    // an attempt gone stops the beats, not the activity
	orphan  chan struct{}           // closed when the server answered that the attempt is gone (with outlive; under sending)
	cancel  context.CancelCauseFunc // ends the lease's context
	log     warner

	sending sync.Mutex // one beat at a time, in order
	mu      sync.Mutex
	landed  time.Time   // when the last beat that landed was sent (the lease's start at first)
	watch   *time.Timer // ends the lease at deadlineLocked
}

// beatingContext returns the context a long activity runs on — a child of the activity's that
// ends when a heartbeat's answer says the server wants the activity to end, or when no beat
// has landed for timeout less beatMargin — and its heartbeat, sent by hb with the activity's
// task token. stop releases the context.
func beatingContext(ctx context.Context, hb heartbeater, token []byte, timeout time.Duration, log warner) (lctx context.Context, beat func(details any), stop func()) {
	lctx, beat, stop, _ = newBeats(ctx, hb, token, timeout, false, log)
	return lctx, beat, stop
}

// newBeats is beatingContext; with outlive, an answer that the attempt is gone stops the
// beats and closes orphaned instead of ending the context.
func newBeats(ctx context.Context, hb heartbeater, token []byte, timeout time.Duration, outlive bool, log warner) (lctx context.Context, beat func(details any), stop func(), orphaned <-chan struct{}) {
	lctx, cancel := context.WithCancelCause(ctx)
	b := &tokenBeats{hb: hb, token: token, timeout: timeout, outlive: outlive, cancel: cancel, log: log, landed: time.Now(),
		orphan: make(chan struct{})}
	if timeout > 0 {
		b.watch = time.AfterFunc(time.Until(b.deadlineLocked()), func() { cancel(errBeatsLost) })
	}
	return lctx, func(details any) { b.beat(lctx, details) }, func() {
		if b.watch != nil {
			b.watch.Stop()
		}
		cancel(nil)
	}, b.orphan
}

// deadlineLocked is when the watch ends the activity unless a beat lands first: the heartbeat
// timeout after the last beat that landed, less beatMargin (a third of a timeout too short for
// it). Callers hold b.mu, or own b alone.
func (b *tokenBeats) deadlineLocked() time.Time {
	return b.landed.Add(b.timeout - min(beatMargin, b.timeout/3))
}

// left is how long the activity may still go without a beat landing (a day without a watch).
func (b *tokenBeats) left() time.Duration {
	if b.timeout <= 0 {
		return 24 * time.Hour
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return time.Until(b.deadlineLocked())
}

// landedAt notes that a beat sent at sent landed, which moves the watch.
func (b *tokenBeats) landedAt(sent time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if sent.After(b.landed) {
		b.landed = sent
	}
	if b.watch != nil {
		b.watch.Reset(time.Until(b.deadlineLocked()))
	}
}

// beat sends details, and once more after rebeatAfter if it did not land on a passing error,
// each try within what is left before the watch ends the activity.
func (b *tokenBeats) beat(ctx context.Context, details any) {
	b.sending.Lock()
	defer b.sending.Unlock()
	for try := 0; try < 2 && ctx.Err() == nil && !b.orphaned(); try++ {
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
		err := b.hb.RecordActivityHeartbeat(rctx, b.token, details)
		cancel()
		switch {
		case err == nil:
			b.landedAt(sent)
			return
		case b.outlive && gone(err):
			close(b.orphan) // once: beats go one at a time, and none is sent after this
			if b.log != nil {
				b.log.Warn("Temporal no longer knows this attempt (timed out while it ran, or its workflow closed): it finishes the work in hand unbeaten and ends", "error", err)
			}
			return
		case !passing(err):
			b.cancel(err) // the server asked for the activity's end, forgot the attempt, or refuses the beat
			return
		}
		if b.log != nil {
			b.log.Warn("a heartbeat did not land", "try", try+1, "error", err)
		}
	}
}

// passing says whether a heartbeat's error may pass: a busy or briefly unreachable server, or
// an answer later than the beat's budget. Anything else (a cancel, the attempt gone — which
// a processing run outlives, see beating —, an
// operator's pause or reset, a refused request) ends the activity.
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

// orphaned says whether the server answered that the attempt is gone (with outlive).
func (b *tokenBeats) orphaned() bool {
	select {
	case <-b.orphan:
		return true
	default:
		return false
	}
}

// gone says whether a heartbeat's error is the server's word that the attempt no longer
// exists: timed out (its retry scheduled, if any is left), or its workflow closed
// (terminated, reset, completed).
func gone(err error) bool {
	var notFound *serviceerror.NotFound
	return errors.As(err, &notFound)
}

// beatOutcome is what an activity that ended with err on lctx returns. When the
// server asked for the end with a cancel, the attempt is reported canceled by task token and
// the SDK told the result is sent (it reports a cancel only when its own heartbeat brought
// it); if that report fails, err goes back as the SDK would send it.
func beatOutcome(ctx, lctx context.Context, hb heartbeater, token []byte, err error) error {
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

// tokenBeatEvery is how often beating sends its details (a test's is shorter).
var tokenBeatEvery = crawl.HeartbeatEvery

// beating runs a long activity on a context its heartbeats keep: details() sent every
// crawl.HeartbeatEvery, by task token through hb (see above), or through the SDK when hb is
// nil. finish stops the beats and turns the activity's error into what it returns (a cancel
// the server asked for is reported as one). With watch, it also stops by itself when no beat
// has landed for nearly its heartbeat timeout, as a lease does: for work two attempts must not
// do at once (a WARC update holds its crawl's lock, and a retry that found it held would skip
// its files). Without, only the server's answer ends it: for work two attempts may do at once
// (a crawl's processing claims its pages, every step idempotent) — on the hour-long bench a
// busy server left processing runs' beats unanswered for 17 s, and a watch threw their batches
// away. Nor does the server's word that the attempt is gone (a beat answered "not found"):
// a busy server times out a live run whose beats were late, and cancelled there it threw away
// the batches in hand while its retry started minutes later (1.5 on the hour-long bench,
// 2026-11-28 14:12). Unwatched, such a run beats no more and orphaned is closed: it finishes
// the work in hand and ends without taking more (its result is dropped; the retry takes back
// at once what it held when it began, and the finish of a page is for the fetch it claimed).
// A watched activity, or one beating through the SDK, never sees orphaned closed.
func beating(ctx context.Context, hb heartbeater, watch bool, details func() any) (bctx context.Context, finish func(error) error, orphaned <-chan struct{}) {
	if hb == nil {
		stop := keepAlive(ctx, details)
		return ctx, func(err error) error { stop(); return err }, nil
	}
	info := activity.GetInfo(ctx)
	var timeout time.Duration
	if watch {
		timeout = info.HeartbeatTimeout
	}
	bctx, beat, stop, orphaned := newBeats(ctx, hb, info.TaskToken, timeout, !watch, activity.GetLogger(ctx))
	stopEvery := clock.Every(bctx, tokenBeatEvery, func() { beat(details()) })
	return bctx, func(err error) error {
		stopEvery()
		err = beatOutcome(ctx, bctx, hb, info.TaskToken, err)
		stop()
		return err
	}, orphaned
}
