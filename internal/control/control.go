package control

import (
	"context"
	"time"

	"github.com/trawlerdev/trawler/internal/admit"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/policy"
	"github.com/trawlerdev/trawler/internal/store"
)

// Store is what the control stage writes in Postgres.
type Store interface {
	AddSeeds(ctx context.Context, crawlID string, seeds []string) error
	ReplayDeadLetters(ctx context.Context, crawlID string, f store.DeadLetterFilter) (map[string]int, error)
	Block(ctx context.Context, crawlID string, hosts, patterns []string) (int64, error)
	ThrottleCrawl(ctx context.Context, crawlID string, delay time.Duration, concurrency int, reset bool) error
}

// Control applies crawl controls.
type Control struct {
	Store  Store
	Crawls *policy.Crawls
	// AdmitSeeds admits seeds and wakes their hosts (admit.Admitter.AdmitSeeds).
	AdmitSeeds func(ctx context.Context, ci *policy.Crawl, cands []store.Candidate) (admit.AdmitStats, error)
	// Wake starts or signals the host workflows of a crawl's hosts (admit.Waker.Wake).
	Wake func(ctx context.Context, crawlID string, cfg crawl.HostConfig, hosts []string) error
}

// AddSeedsInput is a running crawl's add-seeds request.
type AddSeedsInput struct {
	CrawlID string         `json:"crawlId"`
	Seeds   crawl.AddSeeds `json:"seeds"`
}

// AddSeeds admits URLs to a running crawl as seeds (depth 0, seed priority) and wakes their
// hosts; invalid ones are reported, not fatal.
func (c *Control) AddSeeds(ctx context.Context, in AddSeedsInput) (crawl.ControlResult, error) {
	out := crawl.ControlResult{Signal: crawl.SignalAddSeeds}
	if err := c.Store.AddSeeds(ctx, in.CrawlID, in.Seeds.Seeds); err != nil { // the crawl's scope takes them in
		return out, err
	}
	c.Crawls.Forget(in.CrawlID)
	ci, err := c.Crawls.Get(ctx, in.CrawlID)
	if err != nil {
		return out, err
	}
	cands, invalid := admit.SeedCandidates(c.Crawls, ci, in.Seeds.Seeds)
	for _, bad := range invalid {
		out.Error += bad.Seed + ": " + bad.Reason + "; "
	}
	st, err := c.AdmitSeeds(ctx, ci, cands)
	if err != nil {
		return out, err
	}
	out.Count = int64(st.New)
	return out, nil
}

// ReplayInput is a crawl's replay-dead-letters request.
type ReplayInput struct {
	CrawlID string       `json:"crawlId"`
	Replay  crawl.Replay `json:"replay"`
}

// ReplayDeadLetters queues the matching dead URLs again and wakes their hosts.
func (c *Control) ReplayDeadLetters(ctx context.Context, in ReplayInput) (crawl.ControlResult, error) {
	out := crawl.ControlResult{Signal: crawl.SignalReplay}
	hosts, err := c.Store.ReplayDeadLetters(ctx, in.CrawlID, store.DeadLetterFilter{Host: in.Replay.Host, Reason: in.Replay.Reason})
	if err != nil || len(hosts) == 0 {
		return out, err
	}
	ci, err := c.Crawls.Get(ctx, in.CrawlID)
	if err != nil {
		return out, err
	}
	names := make([]string, 0, len(hosts))
	for h, n := range hosts {
		names = append(names, h)
		out.Count += int64(n)
	}
	out.Hosts = hosts
	return out, c.Wake(ctx, in.CrawlID, crawl.HostConfigFrom(ci.Spec), names)
}

// BlockInput is a crawl's block request.
type BlockInput struct {
	CrawlID string      `json:"crawlId"`
	Block   crawl.Block `json:"block"`
}

// Block adds hosts and patterns to the crawl's deny lists and skips its queued URLs they match.
func (c *Control) Block(ctx context.Context, in BlockInput) (crawl.ControlResult, error) {
	out := crawl.ControlResult{Signal: crawl.SignalBlock}
	if err := in.Block.Validate(); err != nil {
		out.Error = err.Error()
		return out, nil
	}
	n, err := c.Store.Block(ctx, in.CrawlID, in.Block.Hosts, in.Block.Patterns)
	out.Count = n
	c.Crawls.Forget(in.CrawlID)
	return out, err
}

// ThrottleInput slows (or resets) the pacing of every host of a crawl.
type ThrottleInput struct {
	CrawlID  string         `json:"crawlId"`
	Throttle crawl.Throttle `json:"throttle"`
}

// ThrottleCrawl records a crawl's throttle in its spec: every lease on its URLs paces by it
// within the crawl cache's lifetime (seconds), whichever host they are on.
func (c *Control) ThrottleCrawl(ctx context.Context, in ThrottleInput) (crawl.ControlResult, error) {
	out := crawl.ControlResult{Signal: crawl.SignalThrottle}
	t := in.Throttle
	if t.Delay < 0 || t.Concurrency < 0 || (t.Delay == 0 && t.Concurrency == 0 && !t.Reset) {
		out.Error = "throttle: give a delay, a concurrency or reset"
		return out, nil
	}
	err := c.Store.ThrottleCrawl(ctx, in.CrawlID, t.Delay.D(), t.Concurrency, t.Reset)
	c.Crawls.Forget(in.CrawlID)
	return out, err
}
