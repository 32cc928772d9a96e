package activities

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"github.com/trawlerdev/trawler/internal/fetching"
)

type ctxKey struct{}

// A heartbeat that failed on a busy server leaves the lease's context running (its values and
// deadline kept), tells the lease to end after its chunk, and beats the last progress again;
// every other end of the activity's context ends the lease's, with the same cause.
func TestLeaseContextOutlivesABusyServerOnly(t *testing.T) {
	rebeats := rebeatsAfter
	rebeatsAfter = []time.Duration{0, 10 * time.Millisecond}
	defer func() { rebeatsAfter = rebeats }()
	for _, tc := range []struct {
		name  string
		cause error
		goOn  bool
	}{
		{"busy workflow", serviceerror.NewResourceExhausted(0, "workflow is busy"), true},
		{"unavailable", serviceerror.NewUnavailable("shard moving"), true},
		{"slow answer", serviceerror.NewDeadlineExceeded("deadline"), true},
		{"cancel asked", temporal.NewCanceledError(), false},
		{"attempt gone", serviceerror.NewNotFound("activity not found"), false},
		{"worker stopping", worker.ErrWorkerShutdown, false},
		{"no cause", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			deadline := time.Now().Add(time.Hour)
			parent, cancelParent := context.WithDeadline(context.WithValue(context.Background(), ctxKey{}, "v"), deadline)
			activityCtx, cancel := context.WithCancelCause(parent)
			defer cancelParent()
			var beats atomic.Int32
			lctx, busy, beat, stop := leaseContext(activityCtx, func(context.Context, fetching.LeaseBeat) { beats.Add(1) })
			defer stop()
			if lctx.Value(ctxKey{}) != "v" {
				t.Fatal("the lease's context lost the activity's values")
			}
			if d, ok := lctx.Deadline(); !ok || !d.Equal(deadline) {
				t.Fatalf("deadline %v %v, want %v", d, ok, deadline)
			}
			beat(fetching.LeaseBeat{})
			cancel(tc.cause)
			if tc.goOn {
				select {
				case <-busy:
				case <-time.After(5 * time.Second):
					t.Fatal("the lease was not told to end after its chunk")
				}
				wait := time.Now().Add(5 * time.Second)
				for beats.Load() < 3 && time.Now().Before(wait) {
					time.Sleep(5 * time.Millisecond)
				}
				if n := beats.Load(); n != 3 {
					t.Errorf("%d beats, want the lease's and 2 after the failed one", n)
				}
				if lctx.Err() != nil {
					t.Fatalf("the lease's context ended: %v", lctx.Err())
				}
				return
			}
			select {
			case <-lctx.Done():
			case <-time.After(5 * time.Second):
				t.Fatal("the lease's context outlived the activity's")
			}
			want := tc.cause
			if want == nil {
				want = context.Canceled
			}
			if got := context.Cause(lctx); !errors.Is(got, want) {
				t.Errorf("cause %v, want %v", got, want)
			}
			select {
			case <-busy:
				t.Error("told to end after its chunk on an end the server asked for")
			default:
			}
		})
	}
}

// The lease's context ends with the activity's deadline, and stop ends it.
func TestLeaseContextEndsAtTheDeadlineAndStop(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	lctx, _, _, stop := leaseContext(ctx, func(context.Context, fetching.LeaseBeat) {})
	defer stop()
	select {
	case <-lctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the lease's context outlived the deadline")
	}
	if !errors.Is(lctx.Err(), context.DeadlineExceeded) {
		t.Errorf("err %v", lctx.Err())
	}
	lctx2, _, _, stop2 := leaseContext(context.Background(), func(context.Context, fetching.LeaseBeat) {})
	stop2()
	if lctx2.Err() == nil {
		t.Error("stop did not end the lease's context")
	}
}

// eitherClosed closes when either channel does, and not after done.
func TestEitherClosed(t *testing.T) {
	a, done := make(chan struct{}), make(chan struct{})
	out := eitherClosed(done, a, nil)
	close(a)
	select {
	case <-out:
	case <-time.After(5 * time.Second):
		t.Fatal("not closed")
	}
	out2 := eitherClosed(done, nil, nil)
	close(done)
	time.Sleep(10 * time.Millisecond)
	select {
	case <-out2:
		t.Fatal("closed with neither")
	default:
	}
}
