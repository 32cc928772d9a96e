package activities

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/trawlerdev/trawler/internal/fetching"
)

// fakeBeats answers heartbeats with the errors given, in turn (nil once they run out).
type fakeBeats struct {
	mu      sync.Mutex
	answers []error
	calls   int
	tokens  [][]byte
	budget  time.Duration // the deadline the last call had
	done    []error       // what CompleteActivity was given
	doneErr error         // what CompleteActivity answers
}

func (f *fakeBeats) CompleteActivity(_ context.Context, _ []byte, _ any, err error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.done = append(f.done, err)
	return f.doneErr
}

func (f *fakeBeats) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

func (f *fakeBeats) RecordActivityHeartbeat(ctx context.Context, token []byte, _ ...any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	f.tokens = append(f.tokens, token)
	if d, ok := ctx.Deadline(); ok {
		f.budget = time.Until(d)
	}
	if len(f.answers) == 0 {
		return nil
	}
	err := f.answers[0]
	f.answers = f.answers[1:]
	return err
}

// A lease's beat goes by its task token with its own time to land; the server's answer ends
// the lease only when it asks for the end (a cancel, the attempt gone, a pause), and a beat
// that met a busy server is sent again instead of ending the lease.
func TestLeaseBeatsEndTheLeaseOnlyWhenTheServerAsks(t *testing.T) {
	defer func(d time.Duration) { rebeatAfter = d }(rebeatAfter)
	rebeatAfter = 10 * time.Millisecond
	busy := serviceerror.NewResourceExhausted(0, "workflow is busy")
	for _, tc := range []struct {
		name    string
		answers []error
		calls   int
		ends    bool
	}{
		{"lands", nil, 1, false},
		{"busy, then lands", []error{busy}, 2, false},
		{"busy twice", []error{busy, serviceerror.NewUnavailable("shard moving")}, 2, false},
		{"cancel asked", []error{temporal.NewCanceledError()}, 1, true},
		{"attempt gone", []error{serviceerror.NewNotFound("activity not found")}, 1, true},
		{"paused by an operator", []error{activity.ErrActivityPaused}, 1, true},
		{"refused", []error{serviceerror.NewInvalidArgument("bad token")}, 1, true},
		{"busy, then cancel asked", []error{busy, temporal.NewCanceledError()}, 2, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hb := &fakeBeats{answers: tc.answers}
			lctx, beat, stop := beatingContext(context.Background(), hb, []byte("token"), time.Minute, nil)
			defer stop()
			beat(fetching.LeaseBeat{})
			if hb.calls != tc.calls {
				t.Errorf("%d heartbeats sent, want %d", hb.calls, tc.calls)
			}
			if string(hb.tokens[0]) != "token" || hb.budget <= 0 || hb.budget > beatRPCTimeout {
				t.Errorf("sent with token %q and %v to land", hb.tokens[0], hb.budget)
			}
			if ended := lctx.Err() != nil; ended != tc.ends {
				t.Fatalf("lease's context ended: %v, want %v", ended, tc.ends)
			}
			if !tc.ends {
				return
			}
			want := tc.answers[len(tc.answers)-1]
			if got := context.Cause(lctx); !errors.Is(got, want) && !(temporal.IsCanceledError(want) && temporal.IsCanceledError(got)) {
				t.Errorf("cause %v, want %v", got, want)
			}
			// What the lease then returns: a cancel asked is reported canceled by task token
			// (the SDK would report it failed) and the SDK told the result is sent.
			out := beatOutcome(context.Background(), lctx, hb, []byte("token"), lctx.Err())
			asked := temporal.IsCanceledError(want)
			if asked != errors.Is(out, activity.ErrResultPending) || asked != (len(hb.done) == 1) {
				t.Fatalf("lease outcome %v, completions %v, for cause %v", out, hb.done, want)
			}
			if asked && !temporal.IsCanceledError(hb.done[0]) {
				t.Errorf("reported %v, want a cancel", hb.done[0])
			}
		})
	}
}

// A lease that ends on its own reports its own error; a cancel that cannot be reported by task
// token goes back to the SDK; beats stop once the lease's context ends.
func TestLeaseBeatsStopWithTheLease(t *testing.T) {
	hb := &fakeBeats{answers: []error{temporal.NewCanceledError()}, doneErr: serviceerror.NewUnavailable("down")}
	lctx, beat, stop := beatingContext(context.Background(), hb, nil, time.Minute, nil)
	own := errors.New("store: record fetch: refused")
	if got := beatOutcome(context.Background(), lctx, hb, nil, own); got != own {
		t.Errorf("outcome %v, want the lease's own error", got)
	}
	beat(fetching.LeaseBeat{})
	if got := beatOutcome(context.Background(), lctx, hb, nil, lctx.Err()); !errors.Is(got, context.Canceled) || len(hb.done) != 1 {
		t.Errorf("outcome %v after a failed report (%d reports), want the lease's error", got, len(hb.done))
	}
	stop()
	beat(fetching.LeaseBeat{})
	if n := hb.count(); n != 1 {
		t.Errorf("%d beats sent, want none after the lease ended", n)
	}
}

// A lease whose beats do not land stops before its heartbeat timeout (the server would retry
// it elsewhere under the same owner); beats that land keep it going past that.
func TestLeaseStopsWhenItsBeatsDoNotLand(t *testing.T) {
	defer func(r, m time.Duration) { rebeatAfter, beatMargin = r, m }(rebeatAfter, beatMargin)
	rebeatAfter, beatMargin = 10*time.Millisecond, 100*time.Millisecond
	const timeout = 400 * time.Millisecond
	busy := serviceerror.NewResourceExhausted(0, "workflow is busy")

	hb := &fakeBeats{answers: []error{busy, busy, busy, busy, busy, busy, busy, busy}}
	began := time.Now()
	lctx, beat, stop := beatingContext(context.Background(), hb, nil, timeout, nil)
	defer stop()
	beat(fetching.LeaseBeat{})
	select {
	case <-lctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("a lease whose beats did not land went on")
	}
	if took := time.Since(began); took >= timeout || !errors.Is(context.Cause(lctx), errBeatsLost) {
		t.Errorf("ended after %v (timeout %v) with %v", took, timeout, context.Cause(lctx))
	}

	hb2 := &fakeBeats{}
	lctx2, beat2, stop2 := beatingContext(context.Background(), hb2, nil, timeout, nil)
	defer stop2()
	for end := time.Now().Add(3 * timeout); time.Now().Before(end); time.Sleep(timeout / 4) {
		beat2(fetching.LeaseBeat{})
	}
	if lctx2.Err() != nil {
		t.Errorf("a lease whose beats landed ended: %v", context.Cause(lctx2))
	}
}

// A long activity run by beating (a crawl's processing run) beats by task token on its
// ticker: a beat a busy server answered late does not end it; the server's word that it timed
// the attempt out tells it it is orphaned, its context alive so the work in hand is finished;
// and a cancel the server asks for ends it and is reported as a cancel.
func TestBeatingKeepsALongActivityThroughALateAnswer(t *testing.T) {
	defer func(d, r time.Duration) { tokenBeatEvery, rebeatAfter = d, r }(tokenBeatEvery, rebeatAfter)
	tokenBeatEvery, rebeatAfter = 20*time.Millisecond, 5*time.Millisecond
	var orphanedAfter time.Duration // how long the last run went before orphaned was closed (0: never)
	run := func(hb *fakeBeats) error {
		orphanedAfter = 0
		var ts testsuite.WorkflowTestSuite
		env := ts.NewTestActivityEnvironment()
		env.RegisterActivityWithOptions(func(ctx context.Context) error {
			began := time.Now()
			bctx, finish, orphaned := beating(ctx, hb, false, func() any { return 7 })
			select {
			case <-bctx.Done():
				return finish(bctx.Err())
			case <-orphaned:
				orphanedAfter = time.Since(began)
				return finish(nil) // the work in hand done
			case <-time.After(300 * time.Millisecond):
				return finish(nil)
			}
		}, activity.RegisterOptions{Name: "long"})
		_, err := env.ExecuteActivity("long")
		return err
	}
	late := &fakeBeats{answers: []error{serviceerror.NewDeadlineExceeded("late"), serviceerror.NewResourceExhausted(0, "busy")}}
	if err := run(late); err != nil || late.count() < 4 || orphanedAfter != 0 {
		t.Fatalf("late answers: the activity ended with %v after %d beats (orphaned after %v); want it to go on beating", err, late.count(), orphanedAfter)
	}
	// Timed out by the server while it ran (its beats were late): its context goes on (the
	// work in hand is finished), it is told it is orphaned, and it beats no more.
	gone := &fakeBeats{answers: []error{serviceerror.NewNotFound("invalid activityID or activity already timed out")}}
	if err := run(gone); err != nil || orphanedAfter == 0 || gone.count() != 1 {
		t.Fatalf("attempt gone: the activity ended with %v after %d beats, orphaned after %v; want it told, its context alive, after one beat",
			err, gone.count(), orphanedAfter)
	}
	canceled := &fakeBeats{answers: []error{temporal.NewCanceledError()}}
	err := run(canceled)
	canceled.mu.Lock()
	defer canceled.mu.Unlock()
	if err == nil || canceled.calls != 1 || len(canceled.done) != 1 || !temporal.IsCanceledError(canceled.done[0]) {
		t.Fatalf("a cancel asked: err %v, %d beats, reported %v; want one beat and a cancel reported", err, canceled.calls, canceled.done)
	}
}

// A watched activity (a WARC update: two attempts must not run at once) still ends when the
// server no longer knows its attempt; it is never told it is orphaned.
func TestWatchedBeatingEndsWhenTheAttemptIsGone(t *testing.T) {
	defer func(d time.Duration) { tokenBeatEvery = d }(tokenBeatEvery)
	tokenBeatEvery = 20 * time.Millisecond
	hb := &fakeBeats{answers: []error{serviceerror.NewNotFound("invalid activityID or activity already timed out")}}
	var ts testsuite.WorkflowTestSuite
	env := ts.NewTestActivityEnvironment()
	orphanedToo := false
	env.RegisterActivityWithOptions(func(ctx context.Context) error {
		bctx, finish, orphaned := beating(ctx, hb, true, func() any { return 7 })
		select {
		case <-bctx.Done():
			select {
			case <-orphaned:
				orphanedToo = true
			default:
			}
			return finish(bctx.Err())
		case <-time.After(2 * time.Second):
			return finish(nil)
		}
	}, activity.RegisterOptions{Name: "watched"})
	_, err := env.ExecuteActivity("watched")
	if err == nil || orphanedToo {
		t.Fatalf("watched, attempt gone: ended with %v, orphaned %v; want it ended and not orphaned", err, orphanedToo)
	}
}
