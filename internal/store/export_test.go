package store

import (
	"context"
	"time"
)

// RecordFetchesTogether records outcomes (host i for outcome i) with the one-statement group
// path, for tests that compare it with RecordFetch.
func (s *Store) RecordFetchesTogether(ctx context.Context, hosts []string, outcomes []FetchOutcome) ([]bool, error) {
	batch := make([]*groupedFetch, len(outcomes))
	for i, o := range outcomes {
		batch[i] = &groupedFetch{host: hosts[i], o: textOutcome(o)}
	}
	if err := recordFetches(ctx, s.pool, batch); err != nil {
		return nil, err
	}
	out := make([]bool, len(batch))
	for i, p := range batch {
		out[i] = p.recorded
	}
	return out, nil
}

// NearLockOf is the advisory-lock key of crawlID's near-duplicate lock (lockKeys).
func NearLockOf(crawlID string) int64 { return lockKeys(crawlID, nil, nil, true)[2] }

// SetInLinksBudget sets how long the URL view searches for in-links, until restore.
func SetInLinksBudget(d time.Duration) (restore func()) {
	was := inLinksBudget
	inLinksBudget = d
	return func() { inLinksBudget = was }
}
