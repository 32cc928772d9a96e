// A lease's progress: its heartbeats, its result and the outcomes the UI shows.

package fetching

import (
	"context"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/store"
)

// heartbeat records the lease's progress, from crawl.LeaseHeartbeatGrace into the lease on. The SDK
// sends an activity's first heartbeat at once, and each heartbeat that reaches the server is
// a write to the host workflow's state: most leases of a real web's small hosts are over
// within the grace, and so cost none. A retry of a lease that died before its first
// heartbeat finds what it did from its URLs' states (a fetched URL is not fetched again);
// its liveness still shows within the heartbeat timeout (crawl.HeartbeatEvery).
//
// Progress (a finished URL, robots.txt, a wait for a slot) beats only when the last beat is
// Stage.beatEvery old (5 s, or the worker's heartbeat throttle when shorter): the SDK
// encodes every call's details at once, even those its throttle then holds back (it sends one
// a throttle interval), and a 10–20 KB JSON encoding per URL was 12% of the fetch worker's CPU
// (issue 36). The lease's ticker beats meanwhile, as often. What a retry misses of the last
// seconds it finds in its URLs' states, as after the SDK's own throttle. A new chunk beats at
// once (beatNow): a retry resumes the chunk it names; and a lease that fails beats its last
// progress, which the SDK sends with the failure.
func (b *leaseRun) heartbeat(ctx context.Context) {
	b.mu.Lock()
	recent := b.f.clock().Since(b.beatAt) < b.f.beatEvery()
	b.mu.Unlock()
	if !recent {
		b.beatNow(ctx)
	}
}

// beatNow beats at once, from crawl.LeaseHeartbeatGrace into the lease on (a new chunk).
func (b *leaseRun) beatNow(ctx context.Context) {
	if b.f.clock().Since(b.began) < crawl.LeaseHeartbeatGrace {
		return
	}
	b.beat()
}

// beat hands the lease's progress to the SDK. beatMu keeps the snapshots in order: the
// ticker and the lease's own beats never hand over an older one after a newer one.
func (b *leaseRun) beat() {
	b.beatMu.Lock()
	defer b.beatMu.Unlock()
	r := b.snapshot()
	b.mu.Lock()
	b.beatAt = b.f.clock().Now()
	b.mu.Unlock()
	b.f.Hooks.beat(r)
}

// result is the lease's result as it stands: the heartbeat without the chunk.
func (b *leaseRun) result() LeaseResult { return b.snapshot().LeaseResult }

// snapshot copies the heartbeat under the lock: the SDK encodes it later, while the lease goes on.
func (b *leaseRun) snapshot() LeaseBeat {
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.res
	r.Finished = append([]bool(nil), r.Finished...)
	r.Chunk = append([]crawl.Claimed(nil), r.Chunk...)
	r.Outcomes = append([]URLOutcome(nil), r.Outcomes...)
	if next := b.nextStartLocked(); !next.IsZero() {
		r.NextSlot = &next
	}
	return r
}

// note keeps a recorded outcome for the UI: the lease's last URL and its per-URL outcomes,
// the newest MaxOutcomes of them.
func (b *leaseRun) note(o store.FetchOutcome) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.res.LastURL = o.URL
	if len(b.res.Outcomes) >= MaxOutcomes {
		b.res.Outcomes = append(b.res.Outcomes[:0], b.res.Outcomes[1:]...)
		b.res.OutcomesDropped++
	}
	b.res.Outcomes = append(b.res.Outcomes, outcomeOf(o))
}
