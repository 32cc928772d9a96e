// A lease's pacing: its delay, its crawls' pacing read again, auto-throttle.

package fetching

import (
	"context"
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/pacing"
)

// repaceEvery is how often a lease reads its crawls' pacing again between chunks (a chunk can
// last long under a slow delay); the crawl cache makes most reads free.
const repaceEvery = 2 * time.Second

// repace reads the pacing again when repaceEvery has passed since the last read.
func (b *leaseRun) repace(ctx context.Context) error {
	if b.f.clock().Since(b.pacedAt) < repaceEvery {
		return nil
	}
	return b.pace(ctx, nil)
}

// knownHealthy says whether the lease knows its host was not failing when it began.
func (b *leaseRun) knownHealthy() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.healthKnown && !b.failing
}

func (b *leaseRun) delay() time.Duration { return max(b.in.Delay, b.res.CrawlDelay, b.res.AutoDelay) }

// pace applies the pacing of the crawls urls belong to. Crawls sharing a host each set their
// own, and a busy host is not signalled when another crawl adds URLs to it: the lease keeps
// the politest pacing of its URLs' crawls, whatever the workflow last heard of. It is read
// again at each chunk, for every crawl the lease has met, so a crawl's throttle, and its
// reset, reach a lease that holds its host for minutes.
func (b *leaseRun) pace(ctx context.Context, urls []crawl.Claimed) error {
	if b.crawls == nil {
		b.crawls, b.baseDelay = map[string]bool{}, b.in.Delay
	}
	b.pacedAt = b.f.clock().Now()
	for _, u := range urls {
		b.crawls[u.CrawlID] = true
	}
	pace := pacing.Pace{Delay: b.baseDelay}
	var autoK float64
	key := b.in.Host
	for id := range b.crawls {
		ci, err := b.f.Crawls.Get(ctx, id)
		if err != nil {
			return err
		}
		pace = pacing.Slowest(pace, pacing.OfCrawl(ci.Spec))
		autoK = max(autoK, ci.Spec.AutoThrottle)
		if k := ci.SlotKey(b.in.Host); k != b.in.Host {
			key = k
		}
	}
	delay := pace.Delay
	b.mu.Lock()
	if c := pace.Concurrency; c > 0 && c < b.in.Concurrency {
		b.in.Concurrency = c
	}
	b.mu.Unlock()
	b.mu.Lock()
	b.autoK = autoK
	if b.slotKey == "" {
		// The first chunk's crawls decide, before the lease's first request: its window is
		// booked on the key, which stays for the lease.
		b.slotKey = key
	}
	raised := delay > b.in.Delay
	b.in.Delay = delay // (lower too, when a throttle ended: the next start keeps the new gap)
	if raised {
		b.delayRaisedLocked()
	}
	b.mu.Unlock()
	return nil
}

// latencyWeight is how much one response time moves the host's recent response time: about
// the last five answers count.
const latencyWeight = 0.3

// autoThrottleLocked learns the host's response time from one answer and, with autoThrottle
// on, sets the gap it asks for: k × the recent response time, at most the crawl's cap on
// delays. delay() keeps the larger of it and the configured delay, so the gap grows as the
// server slows and falls back to the configured delay as it recovers. Callers hold b.mu.
func (b *leaseRun) autoThrottleLocked(latency time.Duration) {
	if b.autoK <= 0 || latency <= 0 {
		return
	}
	if b.latency == 0 {
		b.latency = latency
	} else {
		b.latency = time.Duration(latencyWeight*float64(latency) + (1-latencyWeight)*float64(b.latency))
	}
	auto := time.Duration(b.autoK * float64(b.latency))
	if limit := b.in.MaxCrawlDelay; limit > 0 {
		auto = min(auto, limit)
	}
	b.res.AutoDelay = auto
}
