package store

import (
	"strings"
	"sync"
)

// dueChannel is where Postgres tells which hosts an admission gave new URLs (Admit) and whose
// pages finished processing (FinishProcessed: re-queued for a recrawl, or done), so a fetch
// lease waiting on its own pages' links and recrawls looks again at once instead of polling.
const dueChannel = "trawler_due"

// notifyDueSQL is a statement telling dueChannel, as it commits, of the distinct hosts the
// query hosts selects (one column), 25 a notification, one host a line: a payload stays under
// Postgres's 8,000 bytes (a host, its port included, is at most 260).
func notifyDueSQL(hosts string) string {
	return `SELECT pg_notify('` + dueChannel + `', p) FROM (SELECT string_agg(host, E'\n') AS p FROM (
		SELECT host, (row_number() OVER () - 1) / 25 AS g FROM (SELECT DISTINCT host FROM (` + hosts + `) h(host)) d) n
		GROUP BY g) x`
}

// hostWaiters are the channels waiting for news of a host, one kind of news each.
type hostWaiters struct {
	mu sync.Mutex
	by map[string]map[chan struct{}]bool
}

// WaitDue returns a channel told (once, buffered) when an admission gives host new URLs or
// its pages finish processing, or when news may have been missed (the watch reconnected);
// stop ends the wait. A nil watch's channel is never told.
func (w *ControlWatch) WaitDue(host string) (ch <-chan struct{}, stop func()) {
	if w == nil {
		return make(chan struct{}), func() {}
	}
	return w.due.wait(host)
}

// wait registers a channel told (once, buffered) of news of host; stop ends the wait.
func (d *hostWaiters) wait(host string) (ch <-chan struct{}, stop func()) {
	c := make(chan struct{}, 1)
	d.mu.Lock()
	if d.by == nil {
		d.by = map[string]map[chan struct{}]bool{}
	}
	if d.by[host] == nil {
		d.by[host] = map[chan struct{}]bool{}
	}
	d.by[host][c] = true
	d.mu.Unlock()
	return c, func() {
		d.mu.Lock()
		delete(d.by[host], c)
		if len(d.by[host]) == 0 {
			delete(d.by, host)
		}
		d.mu.Unlock()
	}
}

func (d *hostWaiters) wake(payload string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, h := range strings.Split(payload, "\n") {
		for c := range d.by[h] {
			tell(c)
		}
	}
}

func (d *hostWaiters) wakeAll() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, cs := range d.by {
		for c := range cs {
			tell(c)
		}
	}
}

func tell(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}
