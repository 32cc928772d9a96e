package workflows

import (
	"fmt"
	"hash/fnv"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/trawlerdev/trawler/activities"
	"github.com/trawlerdev/trawler/internal/clock"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/metrics"
	"github.com/trawlerdev/trawler/internal/pacing"
)

// waitInBatch says whether the next lease may wait out the gap itself (its NotBefore).
func (h *hostRun) waitInLease(gap time.Duration) bool {
	return gap <= pacing.InLeaseWait && !h.st.BackoffUntil.After(workflow.Now(h.ctx))
}

// pace is the host's pacing in force: the crawl's, robots.txt's Crawl-delay (capped when it
// was learnt) and the operator's throttle, by the one rule (pacing.Slowest).
func (h *hostRun) pace() pacing.Pace {
	return pacing.Slowest(pacing.Pace{Delay: h.cfg.Delay.D(), Concurrency: h.cfg.Concurrency},
		pacing.Pace{Delay: h.st.CrawlDelay.D()},
		pacing.Pace{Delay: h.st.ThrottleDelay.D(), Concurrency: h.st.ThrottleConcurrent})
}

// delay is the gap between request starts in force.
func (h *hostRun) delay() time.Duration { return h.pace().Delay }

// concurrency is how many requests may be in flight (at least one).
func (h *hostRun) concurrency() int { return max(h.pace().Concurrency, 1) }

// chunkSize is K: how many URLs a lease claims at a time, so that a chunk covers about one
// chunk window of host time.
func (h *hostRun) chunkSize() int {
	d := h.delay()
	k := h.cfg.MaxBatch
	if d > 0 {
		k = int(h.cfg.BatchWindow.D() / d)
	}
	return min(max(k, 1), h.cfg.MaxBatch)
}

// claimTTL is how long a lease's claims last: the whole chunk, K requests at the delay each
// taking up to the request timeout, and some slack.
func (h *hostRun) claimTTL() time.Duration {
	return time.Duration(h.chunkSize())*(h.delay()+h.cfg.RequestTimeout.D()) + claimTTLSlack
}

// apply folds a lease's outcome into the host state: pacing, Retry-After, error backoff.
func (h *hostRun) apply(res activities.FetchLeaseResult, d time.Duration) {
	defer h.describe()
	now := workflow.Now(h.ctx)
	h.st.CrawlDelay, h.st.CrawlDelayCapped = crawl.Duration(res.CrawlDelay), res.CrawlDelayCapped
	if !res.LastRequestAt.IsZero() {
		h.st.LastRequestAt = res.LastRequestAt
		h.st.NextRequestAt = clock.Later(h.st.NextRequestAt, res.LastRequestAt.Add(max(d, h.delay())))
	}
	h.st.Fetched += int64(res.Fetched + res.NotModified)
	h.st.Errors += int64(res.Errors)
	h.st.Skipped += int64(res.Skipped)
	if res.LastError != "" {
		h.st.LastError = crawl.ClipError(res.LastError) // a lease of an older build may not have capped it
	}
	if res.DeferUntil.After(h.st.BackoffUntil) {
		h.st.BackoffUntil = res.DeferUntil
	}
	switch {
	case res.ConsecutiveErrors > 0 && res.Fetched+res.NotModified == 0:
		h.st.ConsecutiveErrors += res.ConsecutiveErrors
		if h.st.ConsecutiveErrors >= 3 {
			h.backoff(now)
		}
	case res.Fetched+res.NotModified > 0:
		h.st.ConsecutiveErrors = 0
		if h.st.BackoffLevel > 0 {
			h.st.BackoffLevel-- // decays after successes
		}
	}
}

// backoff defers the host exponentially: 2^level × max(delay, 1s), ±20% jitter, at most an
// hour. A host that reaches the top level is parked: it is tried once an hour, not hammered.
func (h *hostRun) backoff(now time.Time) {
	workflow.GetMetricsHandler(h.ctx).Counter(metrics.HostBackoffs).Inc(1) // replay-safe: counted once
	h.st.BackoffLevel = min(h.st.BackoffLevel+1, maxBackoffLevel)
	wait := min(max(h.delay(), time.Second)<<h.st.BackoffLevel, time.Hour)
	wait = time.Duration(float64(wait) * jitter(h.in.Host, h.st.BackoffLevel, h.st.Errors))
	if until := now.Add(wait); until.After(h.st.BackoffUntil) {
		h.st.BackoffUntil = until
	}
}

const maxBackoffLevel = 12

func (h *hostRun) backoffState() crawl.HostPhase {
	if h.st.BackoffLevel >= maxBackoffLevel {
		return crawl.HostParked
	}
	return crawl.HostBackoff
}

// jitter is a factor in [0.8, 1.2) that spreads the retries of hosts failing together. It is
// derived from workflow state, so replays compute the same value.
func jitter(host string, level int, errors int64) float64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%d/%d", host, level, errors)
	return 0.8 + 0.4*float64(h.Sum64()%1000)/1000
}
