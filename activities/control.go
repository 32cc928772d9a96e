package activities

import (
	"context"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/store"
)

// AddSeedsInput is a running crawl's add-seeds request.
type AddSeedsInput struct {
	CrawlID string         `json:"crawlId"`
	Seeds   crawl.AddSeeds `json:"seeds"`
}

// AddSeeds admits URLs to a running crawl as seeds (depth 0, seed priority) and wakes their
// hosts; invalid ones are reported, not fatal.
func (f *Frontier) AddSeeds(ctx context.Context, in AddSeedsInput) (crawl.ControlResult, error) {
	out := crawl.ControlResult{Signal: crawl.SignalAddSeeds}
	if err := f.Store.AddSeeds(ctx, in.CrawlID, in.Seeds.Seeds); err != nil { // the crawl's scope takes them in
		return out, err
	}
	f.Crawls.Forget(in.CrawlID)
	ci, err := f.Crawls.Get(ctx, in.CrawlID)
	if err != nil {
		return out, err
	}
	cands, invalid := f.Crawls.SeedCandidates(ci, in.Seeds.Seeds)
	for _, bad := range invalid {
		out.Error += bad.Seed + ": " + bad.Reason + "; "
	}
	st, err := f.Admitter.AdmitSeeds(ctx, ci, cands)
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
func (f *Frontier) ReplayDeadLetters(ctx context.Context, in ReplayInput) (crawl.ControlResult, error) {
	out := crawl.ControlResult{Signal: crawl.SignalReplay}
	hosts, err := f.Store.ReplayDeadLetters(ctx, in.CrawlID, store.DeadLetterFilter{Host: in.Replay.Host, Reason: in.Replay.Reason})
	if err != nil || len(hosts) == 0 {
		return out, err
	}
	ci, err := f.Crawls.Get(ctx, in.CrawlID)
	if err != nil {
		return out, err
	}
	names := make([]string, 0, len(hosts))
	for h, n := range hosts {
		names = append(names, h)
		out.Count += int64(n)
	}
	out.Hosts = hosts
	return out, f.Admitter.Waker.Wake(ctx, in.CrawlID, crawl.HostConfigFrom(ci.Spec), names)
}

// BlockInput is a crawl's block request.
type BlockInput struct {
	CrawlID string      `json:"crawlId"`
	Block   crawl.Block `json:"block"`
}

// Block adds hosts and patterns to the crawl's deny lists and skips its queued URLs they match.
func (f *Frontier) Block(ctx context.Context, in BlockInput) (crawl.ControlResult, error) {
	out := crawl.ControlResult{Signal: crawl.SignalBlock}
	if err := in.Block.Validate(); err != nil {
		out.Error = err.Error()
		return out, nil
	}
	n, err := f.Store.Block(ctx, in.CrawlID, in.Block.Hosts, in.Block.Patterns)
	out.Count = n
	f.Crawls.Forget(in.CrawlID)
	return out, err
}

// ThrottleInput slows (or resets) the pacing of every host of a crawl.
type ThrottleInput struct {
	CrawlID  string         `json:"crawlId"`
	Throttle crawl.Throttle `json:"throttle"`
}

// ThrottleCrawl records a crawl's throttle in its spec: every lease on its URLs paces by it
// within the crawl cache's lifetime (seconds), whichever host they are on.
func (f *Frontier) ThrottleCrawl(ctx context.Context, in ThrottleInput) (crawl.ControlResult, error) {
	out := crawl.ControlResult{Signal: crawl.SignalThrottle}
	t := in.Throttle
	if t.Delay < 0 || t.Concurrency < 0 || (t.Delay == 0 && t.Concurrency == 0 && !t.Reset) {
		out.Error = "throttle: give a delay, a concurrency or reset"
		return out, nil
	}
	err := f.Store.ThrottleCrawl(ctx, in.CrawlID, t.Delay.D(), t.Concurrency, t.Reset)
	f.Crawls.Forget(in.CrawlID)
	return out, err
}
