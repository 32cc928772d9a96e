package workflows

import (
	"encoding/json"
	"fmt"
	"time"

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
