package store

import (
	"strings"
	"sync"
)

// dueChannel is where Postgres tells which hosts an admission gave new URLs (Admit) and whose
// pages finished processing (FinishProcessed: re-queued for a recrawl, or done), so a fetch
// lease waiting on its own pages' links and recrawls looks again at once instead of polling.
const dueChannel = "trawler_due"

// duePayloadMax keeps a notification's payload under Postgres's 8,000 bytes.
const duePayloadMax = 7000

// duePayloads joins hosts into notification payloads, one host a line.
func duePayloads(hosts []string) []string {
	var out []string
	var b strings.Builder
	for _, h := range hosts {
		if b.Len() > 0 && b.Len()+1+len(h) > duePayloadMax {
			out = append(out, b.String())
			b.Reset()
		}
		if len(h) > duePayloadMax {
			continue // (no host name is this long)
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(h)
	}
	if b.Len() > 0 {
		out = append(out, b.String())
	}
	return out
}

// dueWaiters are the channels waiting for news of a host's new URLs.
type dueWaiters struct {
	mu sync.Mutex
	by map[string]map[chan struct{}]bool
}

// WaitDue returns a channel told (once, buffered) when an admission gives host new URLs or
// its pages finish processing, or when news may have been missed (the watch reconnected);
// stop ends the wait. A nil watch's channel is never told.
func (w *ControlWatch) WaitDue(host string) (ch <-chan struct{}, stop func()) {
	c := make(chan struct{}, 1)
	if w == nil {
		return c, func() {}
	}
	d := &w.due
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

func (d *dueWaiters) wake(payload string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, h := range strings.Split(payload, "\n") {
		for c := range d.by[h] {
			tell(c)
		}
	}
}

func (d *dueWaiters) wakeAll() {
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
