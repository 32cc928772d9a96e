package activities

import (
	"context"

	"github.com/trawlerdev/trawler/internal/control"
	"github.com/trawlerdev/trawler/internal/crawl"
)

// The control stage's inputs, as histories hold them.
type (
	AddSeedsInput = control.AddSeedsInput
	ReplayInput   = control.ReplayInput
	BlockInput    = control.BlockInput
	ThrottleInput = control.ThrottleInput
)

// control is the control stage over this worker's stores.
func (f *Frontier) control() *control.Control {
	c := &control.Control{Store: f.Store.Crawls(), Crawls: f.Crawls}
	if f.Admitter != nil {
		c.AdmitSeeds, c.Wake = f.Admitter.AdmitSeeds, f.Admitter.Waker.Wake
	}
	return c
}

// AddSeeds admits URLs to a running crawl as seeds and wakes their hosts.
func (f *Frontier) AddSeeds(ctx context.Context, in AddSeedsInput) (crawl.ControlResult, error) {
	return f.control().AddSeeds(ctx, in)
}

// ReplayDeadLetters queues the matching dead URLs again and wakes their hosts.
func (f *Frontier) ReplayDeadLetters(ctx context.Context, in ReplayInput) (crawl.ControlResult, error) {
	return f.control().ReplayDeadLetters(ctx, in)
}

// Block adds hosts and patterns to the crawl's deny lists and skips its queued URLs they match.
func (f *Frontier) Block(ctx context.Context, in BlockInput) (crawl.ControlResult, error) {
	return f.control().Block(ctx, in)
}

// ThrottleCrawl records a crawl's throttle in its spec.
func (f *Frontier) ThrottleCrawl(ctx context.Context, in ThrottleInput) (crawl.ControlResult, error) {
	return f.control().ThrottleCrawl(ctx, in)
}
