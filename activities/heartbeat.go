package activities

import (
	"context"
	"time"

	"go.temporal.io/sdk/activity"
)

// heartbeatEvery is how often a running lease reports its progress, whatever it is doing
// (waiting for a slot, a slow response, a large page): the activities' heartbeat timeouts can
// then be short, and a dead worker's batch moves on within them. The SDK throttles what
// reaches the server (TRAWLER_HEARTBEAT_MAX).
const heartbeatEvery = 5 * time.Second

// heartbeatGrace is how long a fetch lease runs before it heartbeats its progress (see
// leaseRun.heartbeat); well within fetchHeartbeatTimeout, and below heartbeatEvery.
const heartbeatGrace = 3 * time.Second

// keepAlive heartbeats details() every heartbeatEvery until the returned stop is called or ctx
// ends.
func keepAlive(ctx context.Context, details func() any) (stop func()) {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(heartbeatEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				activity.RecordHeartbeat(ctx, details())
			}
		}
	}()
	return func() { close(done) }
}
