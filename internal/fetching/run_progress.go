// A lease's progress: its heartbeats, its result and the outcomes the UI shows.

package fetching

import (
	"context"
	"time"

	"github.com/trawlerdev/trawler/internal/clock"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/store"
)

// beats heartbeats the lease's liveness and progress: first crawl.LeaseHeartbeatGrace into
// the lease, then every Stage.beatEvery. Each heartbeat that reaches the server is a write of
// the host workflow's state, so a lease beats on this clock only, never on progress: most
// leases of a real web's small hosts are over within the grace and cost none, and a long
// lease one every 20 s, well within the fetch heartbeat timeout. A retry needs no fresher
// beat: it finds where its predecessor was from its URLs' claims (LeaseBeat). A pause or
// throttle of the host reaches the lease in a heartbeat's response, and is told by Postgres
// too, which beats at once (beatWhenTold). Call the result when the lease ends.
func (b *leaseRun) beats(ctx context.Context) (stop func()) {
	every := b.f.beatEvery()
	return clock.EveryAfter(ctx, min(crawl.LeaseHeartbeatGrace, every), every, b.beat)
}

// beatWhenTold beats when Postgres tells that the host's workflow was paused or throttled
// (Stage.Control), a moment later, so that the cancel the workflow asked for is on the server
// when the beat arrives (toldBeatsAfter): the heartbeat's response carries it, and the lease
// stops without waiting for its next beat. Call the result when the lease ends.
func (b *leaseRun) beatWhenTold(ctx context.Context) (stop func()) {
	told, stopWaiting := b.f.Control.WaitHostControl(b.in.Host)
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-told:
			}
			// Again later, in case a beat came before the cancel (the workflow task that asks
			// for it completes after the tell): the fetch worker's SDK throttle is a second.
			for _, after := range toldBeatsAfter {
				if clock.SleepUntil(ctx, b.f.clock(), b.f.clock().Now().Add(after)) != nil {
					return
				}
				b.beat()
			}
		}
	}()
	return func() { cancel(); stopWaiting() }
}

// toldBeatsAfter are when a lease beats after a host control is told, each after the one
// before: the workflow tells it from the workflow task that asks for the cancel, which
// reaches the server as that task completes, a few milliseconds later.
var toldBeatsAfter = []time.Duration{300 * time.Millisecond, 1200 * time.Millisecond, 3 * time.Second}

// beat hands the lease's progress to the SDK. beatMu keeps the snapshots in order: the
// ticker and the lease's own beats never hand over an older one after a newer one.
func (b *leaseRun) beat() {
	b.beatMu.Lock()
	defer b.beatMu.Unlock()
	b.f.Hooks.beat(beatOf(b.result()))
}

// result is the lease's result as it stands.
func (b *leaseRun) result() LeaseResult {
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.res
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
