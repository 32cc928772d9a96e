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

	"github.com/trawlerdev/trawler/internal/fetching"
)

// fakeBeats answers heartbeats with the errors given, in turn (nil once they run out).
type fakeBeats struct {
	mu      sync.Mutex
	answers []error
	calls   int
	tokens  [][]byte
	budget  time.Duration // the deadline the last call had
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
		{"busy, then cancel asked", []error{busy, temporal.NewCanceledError()}, 2, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hb := &fakeBeats{answers: tc.answers}
			lctx, beat, stop := leaseContext(context.Background(), hb, []byte("token"), nil)
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
			// What the lease then returns: canceled only when a cancel was asked.
			out := leaseOutcome(lctx, lctx.Err())
			if temporal.IsCanceledError(want) != temporal.IsCanceledError(out) {
				t.Errorf("lease outcome %v for cause %v", out, want)
			}
		})
	}
}

// A lease that ends on its own (not asked) reports its own error, and beats stop once its
// context ends.
func TestLeaseBeatsStopWithTheLease(t *testing.T) {
	hb := &fakeBeats{}
	lctx, beat, stop := leaseContext(context.Background(), hb, nil, nil)
	own := errors.New("store: record fetch: refused")
	if got := leaseOutcome(lctx, own); got != own {
		t.Errorf("outcome %v, want the lease's own error", got)
	}
	stop()
	beat(fetching.LeaseBeat{})
	if hb.calls != 0 {
		t.Errorf("%d beats sent after the lease ended", hb.calls)
	}
}
