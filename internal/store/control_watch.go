package store

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

// controlChannel is where Postgres tells of a crawl's state or spec changing (the trigger
// of schema/0017_control_notify.sql).
const controlChannel = "trawler_control"

// ControlWatch listens to what Postgres tells workers as it commits. It counts the controls
// (pause, resume, stop, block: a crawl's state or spec changing), so what a worker read
// before one can be known stale without reading it again; while it is not listening
// (connecting, or the connection lost) nothing read is known fresh. And it passes on which
// hosts got new URLs (watch_due.go), and which hosts' workflows were paused or throttled
// (watch_host_control.go).
type ControlWatch struct {
	epoch atomic.Uint64
	live  atomic.Bool
	due   hostWaiters
	// hostControl are the fetch leases waiting to be told that their host's workflow was
	// paused or throttled (watch_host_control.go).
	hostControl hostWaiters
}

// Epoch is the count of controls so far, and whether the watch is listening. A state read
// after Epoch said (e, true) is fresh while Epoch still says (e, true).
func (w *ControlWatch) Epoch() (uint64, bool) {
	if w == nil {
		return 0, false
	}
	return w.epoch.Load(), w.live.Load()
}

// Fresh says whether a state read at epoch e is still fresh.
func (w *ControlWatch) Fresh(e uint64) bool {
	now, live := w.Epoch()
	return live && now == e
}

// WatchControl listens for controls on a connection of its own until ctx ends, reconnecting
// when the connection is lost.
func (s *Store) WatchControl(ctx context.Context) *ControlWatch {
	w := &ControlWatch{}
	cfg := s.pool.Config().ConnConfig.Copy()
	go func() {
		for ctx.Err() == nil {
			err := w.listen(ctx, cfg)
			w.live.Store(false)
			w.epoch.Add(1) // what came while not listening is unknown
			if ctx.Err() != nil {
				return
			}
			slog.Warn("store: listening for crawl controls", "error", err)
			t := time.NewTimer(time.Second)
			select {
			case <-ctx.Done():
				t.Stop()
			case <-t.C:
			}
		}
	}()
	return w
}

func (w *ControlWatch) listen(ctx context.Context, cfg *pgx.ConnConfig) error {
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+controlChannel+"; LISTEN "+dueChannel+"; LISTEN "+hostControlChannel); err != nil {
		return err
	}
	w.epoch.Add(1)
	w.live.Store(true)
	w.due.wakeAll() // what was admitted while not listening is unknown
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		switch n.Channel {
		case dueChannel:
			w.due.wake(n.Payload)
			continue
		case hostControlChannel:
			w.hostControl.wake(n.Payload)
			continue
		}
		w.epoch.Add(1)
	}
}
