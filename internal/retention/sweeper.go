package retention

import (
	"context"
	"log/slog"
	"time"
)

// SweepEvery is how often a process worker sweeps when a retention is set.
const SweepEvery = time.Hour

// Run sweeps crawls that ended more than olderThan ago, at once and then every period, until
// ctx ends. Several workers may run it: a delete is idempotent and one crawl's rows go in one
// transaction, so two sweeps of one crawl leave the same result as one.
func (d *Deleter) Run(ctx context.Context, olderThan, period time.Duration, log *slog.Logger) {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		plans, err := d.Sweep(ctx, olderThan, time.Now(), false)
		for _, p := range plans {
			var rows int64
			for _, n := range p.Rows {
				rows += n
			}
			log.Info("retention: crawl deleted", "crawl", p.Crawl, "objects", len(p.Objects), "rows", rows, "kept", len(p.Kept))
		}
		if err != nil && ctx.Err() == nil {
			log.Warn("retention: sweep", "error", err)
		}
		t.Reset(period)
	}
}
