package workflows

import (
	"encoding/json"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/trawlerdev/trawler/activities"
	"github.com/trawlerdev/trawler/internal/crawl"
)

// CrawlInput is CrawlWorkflow's input: a crawl spec (plain JSON, as `temporal workflow start
// --input` takes it), plus the state a continued run carries.
type CrawlInput struct {
	crawl.Spec
	Run *CrawlCarry `json:"_run,omitempty"`
}

// UnmarshalJSON decodes the spec and the carried state side by side (Spec's own decoder would
// otherwise take the whole object, "_run" as an unknown field of the spec).
func (in *CrawlInput) UnmarshalJSON(data []byte) error {
	var run struct {
		Run *CrawlCarry `json:"_run"`
	}
	if err := json.Unmarshal(data, &run); err != nil {
		return err
	}
	in.Run = run.Run
	return in.Spec.DecodeJSON(data, "_run")
}

// CrawlCarry is what CrawlWorkflow carries across Continue-As-New (in its input as "_run";
// crawlRun, below, is one run of the workflow).
type CrawlCarry struct {
	Started bool              `json:"started"`
	Invalid []crawl.SeedError `json:"invalid,omitempty"`
	Paused  bool              `json:"paused"`
	// ProcessQueue runs the WARC archiver (the worker's process queue, learnt at start).
	ProcessQueue string `json:"processQueue,omitempty"`
	// RenderQueue runs the crawl's render runs (spec.render), learnt at start.
	RenderQueue string `json:"renderQueue,omitempty"`
	// Controls are the latest control results (at most maxControls), for the progress query.
	Controls []crawl.ControlResult `json:"controls,omitempty"`
	// StartedAt is when the crawl's first run began (workflow time): its maxDuration counts
	// from here, paused time included.
	StartedAt time.Time `json:"startedAt,omitempty"`
	// StopReason says why the crawl stopped before it was drained (crawl.StopBy*).
	StopReason string `json:"stopReason,omitempty"`
}

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

// archiveEvery is how many progress ticks pass between WARC updates of a running crawl (each
// update writes only full files, or files whose oldest capture waited warc.maxAge).
const archiveEvery = 12

// archive brings the crawl's WARC files up to date (all of them, when final). Failures are
// logged, not fatal: the captures stay in Postgres and the next update writes them.
func archive(ctx workflow.Context, crawlID, queue string, final bool) {
	var a *activities.Archiver
	var res activities.ArchiveResult
	if err := workflow.ExecuteActivity(archiveOptions(ctx, queue), a.WriteWARC, activities.ArchiveInput{CrawlID: crawlID, Final: final}).Get(ctx, &res); err != nil {
		workflow.GetLogger(ctx).Warn("writing WARC files failed", "crawl", crawlID, "error", err)
	}
}

// archiveOptions are a WARC update's activity options.
func archiveOptions(ctx workflow.Context, queue string) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           or(queue, crawl.ProcessQueue),
		StartToCloseTimeout: time.Hour,
		HeartbeatTimeout:    2 * time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: 5 * time.Second, MaximumInterval: time.Minute, MaximumAttempts: 5},
	})
}

// reprocess hands pages whose processing never finished (a ProcessPage workflow that failed
// for good) to a new ProcessPage workflow.
func reprocess(ctx workflow.Context, crawlID string, tick int) {
	var f *activities.Frontier
	var in crawl.ProcessInput
	if err := workflow.ExecuteLocalActivity(withLocal(ctx), f.StaleFetched, crawlID, reprocessAfter).Get(ctx, &in); err != nil {
		workflow.GetLogger(ctx).Warn("finding unprocessed pages failed", "crawl", crawlID, "error", err)
		return
	}
	if len(in.Pages) == 0 {
		return
	}
	info := workflow.GetInfo(ctx)
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:        crawl.ReprocessID(info.WorkflowExecution.ID, info.OriginalRunID, tick),
		ParentClosePolicy: enumspb.PARENT_CLOSE_POLICY_ABANDON,
	})
	child := workflow.ExecuteChildWorkflow(cctx, ProcessPageWorkflow, in)
	if err := child.GetChildWorkflowExecution().Get(ctx, nil); err != nil {
		workflow.GetLogger(ctx).Warn("starting reprocessing failed", "crawl", crawlID, "error", err)
	}
}

// reprocessAfter is how long a fetched page may wait for processing before the crawl hands it
// out again (well past a processing workflow's retries).
const reprocessAfter = 10 * time.Minute

// staleAfter is how long a host may sit on due URLs without claiming before the crawl wakes it.
const staleAfter = 90 * time.Second

// CrawlWorkflow runs one crawl (ID crawl/<name>): it records the spec, admits the seeds and
// wakes their hosts, then watches progress from Postgres until the frontier drains (the page
// budget is enforced at admission), or a stop signal arrives. pause/resume act on every host
// of the crawl at once through the crawl's state in Postgres, leaving other crawls alone.
func CrawlWorkflow(ctx workflow.Context, in CrawlInput) (crawl.CrawlProgress, error) {
	c := &crawlRun{ctx: ctx, in: in, carry: in.Run}
	if err := c.setup(); err != nil {
		return c.progress, err
	}
	return c.run()
}

// crawlRun is one run of a crawl workflow: its spec, what it carries across Continue-As-New,
// and the progress its query answers.
type crawlRun struct {
	ctx      workflow.Context
	lctx     workflow.Context // for the local activities (short Postgres steps)
	in       CrawlInput
	spec     crawl.Spec // in.Spec with its defaults
	crawlID  string
	carry    *CrawlCarry // what this run carries across Continue-As-New
	progress crawl.CrawlProgress
	procs    *crawlProcessing
	stopped  bool
	// rendering is the crawl's render run in progress (spec.render), nil when none runs.
	rendering workflow.Future
	// archiving is the running crawl's WARC update in progress, nil when none runs.
	archiving workflow.Future
	f         *activities.Frontier

	pause, resume, stop, seeds, replay, block, throttle workflow.ReceiveChannel
}

// setup checks the spec, names the crawl, answers the progress query, starts the crawl once
// (its first run) and reads its progress.
func (c *crawlRun) setup() error {
	ctx := c.ctx
	c.spec = c.in.Spec.WithDefaults()
	if err := c.spec.Validate(); err != nil {
		return temporal.NewNonRetryableApplicationError("invalid crawl spec: "+err.Error(), "InvalidSpec", err)
	}
	id := workflow.GetInfo(ctx).WorkflowExecution.ID
	c.crawlID = c.spec.Name
	if c.crawlID == "" {
		var ok bool
		if c.crawlID, ok = crawl.CrawlOf(id); !ok {
			c.crawlID = id
		}
	}
	if c.carry == nil {
		c.carry = &CrawlCarry{}
	}
	_ = workflow.UpsertTypedSearchAttributes(ctx, crawl.SearchCrawlID.ValueSet(c.crawlID))
	c.lctx = withLocal(ctx)
	if err := workflow.SetQueryHandler(ctx, crawl.QueryProgress, func() (crawl.CrawlProgress, error) { return c.progress, nil }); err != nil {
		return err
	}
	if !c.carry.Started {
		c.carry.StartedAt = workflow.Now(ctx)
		var started activities.StartCrawlResult
		if err := workflow.ExecuteLocalActivity(c.lctx, c.f.StartCrawl, activities.StartCrawlInput{CrawlID: c.crawlID, Spec: c.spec,
			Unknown: c.in.Spec.UnknownFields()}).Get(ctx, &started); err != nil {
			return err
		}
		c.carry.Started, c.carry.Invalid, c.carry.ProcessQueue = true, started.Invalid, started.ProcessQueue
		c.carry.RenderQueue = started.RenderQueue
		c.startDeliveries()
	}
	if err := c.refresh(); err != nil {
		return err
	}
	c.procs = &crawlProcessing{crawlID: c.crawlID, queue: c.carry.ProcessQueue}
	c.pause = workflow.GetSignalChannel(ctx, crawl.SignalPause)
	c.resume = workflow.GetSignalChannel(ctx, crawl.SignalResume)
	c.stop = workflow.GetSignalChannel(ctx, crawl.SignalStop)
	c.seeds = workflow.GetSignalChannel(ctx, crawl.SignalAddSeeds)
	c.replay = workflow.GetSignalChannel(ctx, crawl.SignalReplay)
	c.block = workflow.GetSignalChannel(ctx, crawl.SignalBlock)
	c.throttle = workflow.GetSignalChannel(ctx, crawl.SignalThrottle)
	return nil
}

// run waits a progress interval (or a signal) at a time and acts on what it finds, until the
// crawl is done or stopped, or its history asks for Continue-As-New.
func (c *crawlRun) run() (crawl.CrawlProgress, error) {
	ctx := c.ctx
	defer c.procs.started(ctx)
	for tick := 1; ; tick++ {
		if c.continueDue() && c.archiveSettled() {
			c.procs.started(ctx) // before the last look at the signals: a wait here could hide one
			_ = workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
			if c.signalsWaiting() == 0 {
				return c.progress, workflow.NewContinueAsNewError(ctx, CrawlWorkflow, CrawlInput{Spec: c.in.Spec, Run: c.carry})
			}
		}
		if err := c.wait(); err != nil {
			return c.progress, err
		}
		if err := c.refresh(); err != nil {
			return c.progress, err
		}
		if done, err := c.act(tick); done || err != nil {
			return c.progress, err
		}
	}
}

// continueDue says whether the run should continue as new (once no WARC update runs: its
// lock would make the next run's final write find the crawl busy).
func (c *crawlRun) continueDue() bool {
	info := workflow.GetInfo(c.ctx)
	return info.GetContinueAsNewSuggested() || info.GetCurrentHistoryLength() > 3000
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

// act does what the fresh progress calls for at the tick-th look: end a stopped or drained
// crawl (with its last WARC files), and from time to time write WARC files, wake hosts sitting
// on due URLs and hand out pages whose processing never finished.
func (c *crawlRun) act(tick int) (done bool, err error) {
	ctx := c.ctx
	if why := c.overBudget(); why != "" && !c.stopped && c.progress.State != crawl.CrawlStopped {
		c.carry.StopReason, c.progress.StopReason, c.stopped = why, why, true
		if err := c.setState(crawl.CrawlStopped); err != nil {
			return true, err
		}
	}
	if c.stopped || c.progress.State == crawl.CrawlStopped {
		// The query says so at once, with the reason: `trawler crawl --wait` and the UI must
		// not show a stopped crawl as running while its last requests land.
		c.progress.State = crawl.CrawlStopped
		c.progress.StopReason = c.carry.StopReason
		c.describe()
		// No request starts after the stop (a lease checks its claim before each one), but
		// those already sent still record their fetches: let them land, so the final WARC
		// file holds them too.
		_ = workflow.Sleep(ctx, c.spec.RequestTimeout.D()+5*time.Second)
		c.archiveFinal()
		c.progress.State = crawl.CrawlStopped
		c.describe()
		return true, nil
	}
	if c.progress.Pending == 0 && !c.carry.Paused {
		c.archiveFinal()
		if err := c.setState(crawl.CrawlDone); err != nil {
			return true, err
		}
		c.progress.State = crawl.CrawlDone
		c.describe()
		return true, nil
	}
	if tick%archiveEvery == 0 {
		c.archiveRunning()
	}
	if c.spec.Render != nil && !c.carry.Paused && c.progress.Renders > 0 {
		c.render(tick)
	}
	if !c.carry.Paused && tick%6 == 0 {
		c.wake(staleAfter)
		reprocess(ctx, c.crawlID, tick)
	}
	return false, nil
}

// renderRunFor is how long one render run lasts before the crawl starts the next.
const renderRunFor = 2 * time.Minute

// render keeps one render run going while pages wait to be rendered: an activity on the
// render queue (a worker with Chromium) that claims the crawl's queued renders from Postgres.
// A lease that failed or ended is followed by the next at a later tick.
func (c *crawlRun) render(tick int) {
	if c.rendering != nil && !c.rendering.IsReady() {
		return
	}
	if c.rendering != nil {
		var res activities.RenderResult
		if err := c.rendering.Get(c.ctx, &res); err != nil {
			workflow.GetLogger(c.ctx).Warn("render run failed", "crawl", c.crawlID, "error", err)
		}
	}
	actx := workflow.WithActivityOptions(c.ctx, workflow.ActivityOptions{
		TaskQueue:           or(c.carry.RenderQueue, crawl.RenderQueue),
		StartToCloseTimeout: renderRunFor + 3*time.Minute,
		// The run beats every few seconds, pages rendering or not: a dead render worker's
		// claims are taken back by the retry within the recovery bound (README, Resilience).
		HeartbeatTimeout: 20 * time.Second,
		RetryPolicy:      &temporal.RetryPolicy{InitialInterval: 5 * time.Second, MaximumInterval: time.Minute, MaximumAttempts: 3},
	})
	var r *activities.Renderer
	owner := crawl.RenderOwner(workflow.GetInfo(c.ctx).WorkflowExecution.RunID, tick)
	c.rendering = workflow.ExecuteActivity(actx, r.RenderPages, activities.RenderInput{CrawlID: c.crawlID, Owner: owner, For: renderRunFor})
}

// refresh reads the crawl's progress for the query and the Temporal UI.
func (c *crawlRun) refresh() error {
	var p crawl.CrawlProgress
	if err := workflow.ExecuteLocalActivity(c.lctx, c.f.Progress, c.crawlID).Get(c.ctx, &p); err != nil {
		return err
	}
	p.InvalidSeed, p.Controls, p.StopReason = c.carry.Invalid, c.carry.Controls, c.carry.StopReason
	c.progress = p
	c.describe()
	return nil
}

// describe sets the line the Temporal UI shows as the crawl's current details (metadata, not
// history: no command, so it never affects replay).
func (c *crawlRun) describe() {
	p := c.progress
	state := string(p.State)
	if p.StopReason != "" {
		state += " (" + p.StopReason + ")"
	}
	workflow.SetCurrentDetails(c.ctx, fmt.Sprintf("**%s** · %d of %d URLs fetched · %d pages · %d pending · %d errors · %d dead · %.1f pages/s",
		state, p.Fetched, p.Admitted, p.Pages, p.Pending, p.Errors, p.Dead, p.PagesPerSec))
}

// setState moves the crawl to s in Postgres, where its hosts' claims read it.
func (c *crawlRun) setState(s crawl.CrawlState) error {
	return workflow.ExecuteLocalActivity(c.lctx, c.f.SetCrawlState, c.crawlID, s).Get(c.ctx, nil)
}

// wake starts or signals the crawl's hosts with due URLs that claimed nothing for staleFor.
func (c *crawlRun) wake(staleFor time.Duration) {
	if err := workflow.ExecuteLocalActivity(c.lctx, c.f.WakeStale, c.crawlID, staleFor).Get(c.ctx, nil); err != nil {
		workflow.GetLogger(c.ctx).Warn("waking stale hosts failed", "crawl", c.crawlID, "error", err)
	}
}
