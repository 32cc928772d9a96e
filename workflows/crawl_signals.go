package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/trawlerdev/trawler/activities"
	"github.com/trawlerdev/trawler/internal/crawl"
)

const maxControls = 10

// control runs one crawl control (add seeds, replay dead letters, block) as a local activity
// and keeps its result for the progress query. A failure is reported there, never fatal.
func control(ctx workflow.Context, run *CrawlCarry, signal string, activity, input any) {
	res := crawl.ControlResult{Signal: signal}
	if err := workflow.ExecuteLocalActivity(withLocal(ctx), activity, input).Get(ctx, &res); err != nil {
		res.Error = crawl.ClipError(err.Error()) // carried across Continue-As-New
		workflow.GetLogger(ctx).Warn("crawl control failed", "signal", signal, "input", input, "error", err)
	}
	run.Controls = append(run.Controls, res)
	if len(run.Controls) > maxControls {
		run.Controls = run.Controls[len(run.Controls)-maxControls:]
	}
}

// signalsWaiting counts signals received and not yet acted on.
func (c *crawlRun) signalsWaiting() int {
	return c.pause.Len() + c.resume.Len() + c.stop.Len() + c.seeds.Len() + c.replay.Len() + c.block.Len() + c.throttle.Len()
}

// wait sleeps for a progress interval, or until a signal (acted on at once) or the end of a
// processing child.
func (c *crawlRun) wait() error {
	ctx := c.ctx
	var sigErr error
	tctx, cancel := workflow.WithCancel(ctx)
	defer cancel()
	sel := workflow.NewSelector(ctx)
	sel.AddFuture(workflow.NewTimer(tctx, c.nextLook()), func(workflow.Future) {})
	if !c.stopped {
		c.procs.keep(ctx)
		c.procs.addTo(ctx, sel)
	}
	sel.AddReceive(c.pause, func(ch workflow.ReceiveChannel, _ bool) {
		ch.Receive(ctx, nil)
		c.carry.Paused, sigErr = true, c.setState(crawl.CrawlPaused)
	})
	sel.AddReceive(c.resume, func(ch workflow.ReceiveChannel, _ bool) {
		ch.Receive(ctx, nil)
		c.carry.Paused, sigErr = false, c.setState(crawl.CrawlRunning)
		c.wake(0)
	})
	sel.AddReceive(c.stop, func(ch workflow.ReceiveChannel, _ bool) {
		ch.Receive(ctx, nil)
		c.carry.StopReason = crawl.StopBySignal
		c.stopped, sigErr = true, c.setState(crawl.CrawlStopped)
	})
	sel.AddReceive(c.seeds, func(ch workflow.ReceiveChannel, _ bool) {
		var in crawl.AddSeeds
		ch.Receive(ctx, &in)
		control(ctx, c.carry, crawl.SignalAddSeeds, c.f.AddSeeds, activities.AddSeedsInput{CrawlID: c.crawlID, Seeds: in})
	})
	sel.AddReceive(c.replay, func(ch workflow.ReceiveChannel, _ bool) {
		var in crawl.Replay
		ch.Receive(ctx, &in)
		control(ctx, c.carry, crawl.SignalReplay, c.f.ReplayDeadLetters, activities.ReplayInput{CrawlID: c.crawlID, Replay: in})
	})
	sel.AddReceive(c.block, func(ch workflow.ReceiveChannel, _ bool) {
		var in crawl.Block
		ch.Receive(ctx, &in)
		control(ctx, c.carry, crawl.SignalBlock, c.f.Block, activities.BlockInput{CrawlID: c.crawlID, Block: in})
	})
	sel.AddReceive(c.throttle, func(ch workflow.ReceiveChannel, _ bool) {
		var in crawl.Throttle
		ch.Receive(ctx, &in)
		control(ctx, c.carry, crawl.SignalThrottle, c.f.ThrottleCrawl, activities.ThrottleInput{CrawlID: c.crawlID, Throttle: in})
	})
	sel.Select(ctx)
	return sigErr
}
