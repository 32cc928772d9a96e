package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/trawlerdev/trawler/internal/clock"
	"github.com/trawlerdev/trawler/internal/crawl"
)

// waitSignal blocks until deadline (false; zero: no deadline), a control signal (pause,
// resume, throttle) or one of also (true). urls-added ends the wait only when wakeOnURLs is
// set (idle): waiting out the crawl-delay it is applied and the same timer goes on, so a busy
// host's wake-ups cost no timer churn.
func (h *hostRun) waitSignal(deadline time.Time, wakeOnURLs bool, also ...workflow.Future) bool {
	ctx := h.ctx
	h.wake = deadline
	tctx, cancel := workflow.WithCancel(ctx)
	defer cancel()
	var timer workflow.Future
	if !deadline.IsZero() {
		d := deadline.Sub(workflow.Now(ctx))
		if d <= 0 {
			return false
		}
		timer = workflow.NewTimer(tctx, d)
	}
	for {
		fired, urls := false, false
		sel := workflow.NewSelector(ctx)
		if timer != nil {
			sel.AddFuture(timer, func(workflow.Future) { fired = true })
		}
		for _, f := range also {
			sel.AddFuture(f, func(workflow.Future) {})
		}
		h.addControlSignals(sel)
		sel.AddReceive(h.urlsAdded, func(c workflow.ReceiveChannel, _ bool) { h.onURLsAdded(c); urls = true })
		sel.Select(ctx)
		switch {
		case fired:
			return false
		case urls && !wakeOnURLs && !h.shouldContinueAsNew():
			continue // (a long pause under a stream of wake-ups still continues as new)
		default:
			return true
		}
	}
}

func (h *hostRun) addSignals(sel workflow.Selector) {
	sel.AddReceive(h.urlsAdded, func(c workflow.ReceiveChannel, _ bool) { h.onURLsAdded(c) })
	h.addControlSignals(sel)
}

func (h *hostRun) addControlSignals(sel workflow.Selector) {
	sel.AddReceive(h.pause, func(c workflow.ReceiveChannel, _ bool) { c.Receive(h.ctx, nil); h.onPause() })
	sel.AddReceive(h.resume, func(c workflow.ReceiveChannel, _ bool) { c.Receive(h.ctx, nil); h.st.Paused = false })
	sel.AddReceive(h.throttle, func(c workflow.ReceiveChannel, _ bool) {
		var t crawl.Throttle
		c.Receive(h.ctx, &t)
		h.onThrottle(t)
	})
}

// drainSignals applies every pending signal without blocking; true if there was any.
func (h *hostRun) drainSignals() bool {
	any := false
	for {
		var t crawl.Throttle
		var added crawl.URLsAdded
		switch {
		case h.urlsAdded.ReceiveAsync(&added):
			h.merge(added)
		case h.pause.ReceiveAsync(nil):
			h.onPause()
		case h.resume.ReceiveAsync(nil):
			h.st.Paused = false
		case h.throttle.ReceiveAsync(&t):
			h.onThrottle(t)
		default:
			return any
		}
		any = true
	}
}

func (h *hostRun) onURLsAdded(c workflow.ReceiveChannel) {
	var s crawl.URLsAdded
	c.Receive(h.ctx, &s)
	h.merge(s)
}

// merge takes the politest pacing any crawl sharing the host asks for.
func (h *hostRun) merge(s crawl.URLsAdded) {
	if s.Config.Delay.D() > h.cfg.Delay.D() {
		h.cfg.Delay = s.Config.Delay
	}
	if c := s.Config.Concurrency; c > 0 && c < h.cfg.Concurrency {
		h.cfg.Concurrency = c
	}
	if h.cfg.FetchQueue == "" {
		h.cfg.FetchQueue, h.cfg.ProcessQueue = s.Config.FetchQueue, s.Config.ProcessQueue
	}
}

func (h *hostRun) onPause() {
	h.st.Paused = true
	if h.busy {
		h.interrupted = true
	}
}

func (h *hostRun) onThrottle(t crawl.Throttle) {
	if t.Reset {
		h.st.ThrottleDelay, h.st.ThrottleConcurrent = 0, 0
	}
	if t.Delay > 0 {
		h.st.ThrottleDelay = t.Delay
	}
	if t.Concurrency > 0 {
		h.st.ThrottleConcurrent = t.Concurrency
	}
	if h.busy && (t.Delay > 0 || t.Concurrency > 0 || t.Reset) {
		h.interrupted = true
	}
	// The next request keeps the new delay from the last one.
	if !h.st.LastRequestAt.IsZero() {
		h.st.NextRequestAt = clock.Later(h.st.NextRequestAt, h.st.LastRequestAt.Add(h.delay()))
	}
}
