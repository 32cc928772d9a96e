package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
)

// progressSamples is a count a crawl grows (fetches recorded, pages served) sampled from its
// start: what tells how long a fault held the crawl back, or how fast it started.
type progressSamples struct {
	mu    sync.Mutex
	at    []time.Duration
	count []int64
}

// sampleProgress counts the stack's fetch rows every second until the test ends. A sample
// that fails (Postgres down or failing over) is skipped.
func sampleProgress(s *stack, start time.Time) *progressSamples {
	p := &progressSamples{}
	ctx, cancel := context.WithCancel(context.Background())
	s.t.Cleanup(cancel)
	go func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			var n int64
			qctx, qcancel := context.WithTimeout(ctx, 900*time.Millisecond)
			err := s.store.Pool().QueryRow(qctx, `SELECT count(*) FROM fetches`).Scan(&n)
			qcancel()
			if err == nil {
				p.mu.Lock()
				p.at, p.count = append(p.at, time.Since(start)), append(p.count, n)
				p.mu.Unlock()
			}
		}
	}()
	return p
}

// rate is the count's growth a second between two moments, from the samples at or before
// them (0 if none).
func (p *progressSamples) rate(from, to time.Duration) float64 {
	i, j := -1, -1
	for k, at := range p.at {
		if at <= from {
			i = k
		}
		if at <= to {
			j = k
		}
	}
	if i < 0 || j <= i {
		return 0
	}
	return float64(p.count[j]-p.count[i]) / (p.at[j] - p.at[i]).Seconds()
}

// recoveries says, for each fault injected, how long after it the crawl's fetch rate over 3 s
// was back to at least half its rate in the 10 s before the fault.
func (p *progressSamples) recoveries(c *chaosRun) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	last := time.Duration(0)
	if len(p.at) > 0 {
		last = p.at[len(p.at)-1]
	}
	for i, at := range c.at {
		name := strings.TrimSpace(c.log[i])
		before := p.rate(at-10*time.Second, at)
		if before <= 0 {
			out = append(out, fmt.Sprintf("%s: no rate before it to compare", name))
			continue
		}
		line := fmt.Sprintf("%s: not back to %.0f fetches/s before the crawl ended", name, before/2)
		for d := 3 * time.Second; at+d <= last; d += time.Second {
			if r := p.rate(at+d-3*time.Second, at+d); r >= before/2 {
				within := "within " + d.String()
				if d == 3*time.Second {
					within = "at once (≤ 3s, the window)"
				}
				line = fmt.Sprintf("%s: %s (%.0f fetches/s before, %.0f after)", name, within, before, r)
				break
			}
		}
		out = append(out, line)
	}
	return out
}
