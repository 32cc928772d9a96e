package store

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
)

// maxFetchGroup bounds the outcomes written in one round trip.
const maxFetchGroup = 256

// fetchGroup holds outcomes waiting to be recorded. The bodies of a worker's requests are
// stored together (one segment a second), so their outcomes arrive together: the first
// caller writes everything queued in one pipelined round trip, and whatever queued up
// meanwhile in the next, while the others wait for their turn (group commit, no goroutine of
// its own and no added delay).
type fetchGroup struct {
	mu      sync.Mutex
	queue   []*groupedFetch
	writing bool
}

type groupedFetch struct {
	host     string
	o        FetchOutcome
	recorded bool
	err      error
	done     chan struct{}
}

// RecordFetchGrouped is RecordFetch, written in one round trip with the outcomes other
// requests of this process record at the same time. One outcome Postgres refuses costs only
// itself: the group is then recorded one by one.
func (agg Fetches) RecordFetchGrouped(ctx context.Context, host string, o FetchOutcome) (bool, error) {
	s := agg.s
	if o.State == crawl.URLDead { // its dead letter needs a transaction of its own
		return s.Fetches().RecordFetch(ctx, host, o)
	}
	p := &groupedFetch{host: host, o: o, done: make(chan struct{})}
	g := &s.fetches
	g.mu.Lock()
	g.queue = append(g.queue, p)
	lead := !g.writing
	g.writing = true
	g.mu.Unlock()
	if lead {
		// The writer writes for everyone: a caller giving up must not cancel the others'.
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		s.writeFetchGroups(wctx)
		cancel()
	}
	select {
	case <-p.done:
		return p.recorded, p.err
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

// writeFetchGroups writes queued outcomes until none is left.
func (s *Store) writeFetchGroups(ctx context.Context) {
	g := &s.fetches
	for {
		g.mu.Lock()
		n := min(len(g.queue), maxFetchGroup)
		batch := g.queue[:n:n]
		g.queue = g.queue[n:]
		if n == 0 {
			g.writing = false
		}
		g.mu.Unlock()
		if n == 0 {
			return
		}
		s.writeFetchGroup(ctx, batch)
		for _, p := range batch {
			close(p.done)
		}
	}
}

func (s *Store) writeFetchGroup(ctx context.Context, batch []*groupedFetch) {
	// Rows are locked in the same order by every writer (host, then URL).
	sort.Slice(batch, func(i, j int) bool {
		if batch[i].host != batch[j].host {
			return batch[i].host < batch[j].host
		}
		return string(batch[i].o.Hash) < string(batch[j].o.Hash)
	})
	for _, p := range batch {
		p.o = textOutcome(p.o)
	}
	for _, run := range distinctRuns(batch) {
		// One statement for the run; if Postgres refuses it (one outcome's values), nothing
		// of it was recorded, and its outcomes go one by one.
		if recordFetches(ctx, s.pool, run) != nil {
			s.recordEach(ctx, run)
		}
	}
}

// recordEach records the outcomes one by one: one that Postgres refuses costs only itself.
func (s *Store) recordEach(ctx context.Context, batch []*groupedFetch) {
	for _, p := range batch {
		p.recorded, p.err = s.Fetches().RecordFetch(ctx, p.host, p.o)
	}
}
