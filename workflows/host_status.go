package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/trawlerdev/trawler/internal/crawl"
)

func (h *hostRun) setState(s crawl.HostPhase) {
	if s == h.state {
		return
	}
	h.state = s
	_ = workflow.UpsertTypedSearchAttributes(h.ctx, crawl.SearchHostState.ValueSet(string(s)))
	h.describe()
}

// describe sets the line the Temporal UI shows as the workflow's current details (metadata,
// not history: no command, so it never affects replay).
func (h *hostRun) describe() {
	d := fmt.Sprintf("**%s** · delay %s · fetched %d · errors %d · skipped %d", h.state, h.delay(), h.st.Fetched, h.st.Errors, h.st.Skipped)
	if h.waiting != "" {
		d += " · waiting for " + h.waiting
	}
	if h.st.Paused {
		d += " · paused by signal"
	}
	if h.st.LastError != "" {
		d += " · last error: " + h.st.LastError
	}
	workflow.SetCurrentDetails(h.ctx, d)
}

// waitFor notes what the host waits for now and shows it.
func (h *hostRun) waitFor(what string) {
	if what != h.waiting {
		h.waiting = what
		h.describe()
	}
}

// clockTime is a time of day as the UI's details show it (UTC).
func clockTime(t time.Time) string { return t.UTC().Format("15:04:05") + " UTC" }

func (h *hostRun) status() crawl.HostStatus {
	st := crawl.HostStatus{Host: h.in.Host, State: h.state, Paused: h.st.Paused, Delay: h.delay().String(),
		CrawlDelay: h.st.CrawlDelay.D().String(), CrawlDelayCap: h.st.CrawlDelayCapped, Throttle: h.st.ThrottleDelay.D().String(),
		Concurrency: h.concurrency(), Fetched: h.st.Fetched, Errors: h.st.Errors, Skipped: h.st.Skipped, LastError: h.st.LastError,
		NextWake: h.wake, BackoffUntil: h.st.BackoffUntil, BackoffLevel: h.st.BackoffLevel,
		HistoryEvents: workflow.GetInfo(h.ctx).GetCurrentHistoryLength(), Runs: h.st.Runs}
	if h.busy {
		st.InFlight = 1
	}
	return st
}
