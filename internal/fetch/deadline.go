package fetch

import (
	"context"
	"sync"
	"time"
)

// deadline is a request's time limit that stops while the request waits for room in the
// worker's body budget: a wait of the worker's making is not the site's slowness, so it
// neither times the request out nor counts against the host.
type deadline struct {
	mu      sync.Mutex
	left    time.Duration
	started time.Time
	timer   *time.Timer // nil while paused
	fire    func()
}

// startDeadline cancels the request (with ErrTimeout as the cause) after d of running time.
func startDeadline(d time.Duration, cancel context.CancelCauseFunc) *deadline {
	dl := &deadline{left: d, fire: func() { cancel(ErrTimeout) }}
	dl.resume()
	return dl
}

// pause stops the clock; the time already run is kept.
func (dl *deadline) pause() {
	dl.mu.Lock()
	defer dl.mu.Unlock()
	if dl.timer == nil {
		return
	}
	if dl.timer.Stop() {
		dl.left -= time.Since(dl.started)
	}
	dl.timer = nil
}

// resume starts the clock again with the time left.
func (dl *deadline) resume() {
	dl.mu.Lock()
	defer dl.mu.Unlock()
	if dl.timer != nil {
		return
	}
	dl.started = time.Now()
	dl.timer = time.AfterFunc(max(dl.left, 0), dl.fire)
}

// stop ends the clock for good.
func (dl *deadline) stop() { dl.pause() }
