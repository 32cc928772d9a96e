package store

import (
	"context"
	"fmt"
)

// hostControlChannel is where a host workflow tells its running fetch lease, as it asks
// Temporal to cancel it, that the host was paused or throttled (TellHostControl). The cancel
// reaches a lease only in a heartbeat's response, and a lease beats rarely (every 20 s: each
// beat is a write of the workflow's state), so the lease beats when told, and stops within
// about a second instead of within its next beat.
const hostControlChannel = "trawler_host_control"

// WaitHostControl returns a channel told (once, buffered) when host's workflow tells of a
// pause or throttle; stop ends the wait. News missed while the watch reconnects is not
// replayed: the lease's next beat carries the cancel all the same. A nil watch's channel is
// never told.
func (w *ControlWatch) WaitHostControl(host string) (ch <-chan struct{}, stop func()) {
	if w == nil {
		return make(chan struct{}), func() {}
	}
	return w.hostControl.wait(host)
}

// TellHostControl tells the workers' watches that host's workflow was paused or throttled.
func (agg Hosts) TellHostControl(ctx context.Context, host string) error {
	if _, err := agg.s.pool.Exec(ctx, `SELECT pg_notify('`+hostControlChannel+`', $1)`, host); err != nil {
		return fmt.Errorf("store: tell %s's lease of a control: %w", host, err)
	}
	return nil
}
