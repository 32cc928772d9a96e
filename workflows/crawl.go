package workflows

import (
	"fmt"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/trawlerdev/trawler/activities"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/store"
)

// CrawlInput is CrawlWorkflow's input: a crawl spec (plain JSON, as `temporal workflow start
// --input` takes it), plus the state a continued run carries.
type CrawlInput struct {
	crawl.Spec
	Run *CrawlRun `json:"_run,omitempty"`
}

// CrawlRun is what CrawlWorkflow carries across Continue-As-New.
type CrawlRun struct {
	Started bool              `json:"started"`
	Invalid []crawl.SeedError `json:"invalid,omitempty"`
	Paused  bool              `json:"paused"`
	// ProcessQueue runs the WARC archiver (the worker's process queue, learnt at start).
	ProcessQueue string `json:"processQueue,omitempty"`
	// Controls are the latest control results (at most maxControls), for the progress query.
	Controls []crawl.ControlResult `json:"controls,omitempty"`
}

const maxControls = 10

// control runs one crawl control (add seeds, replay dead letters, block) as a local activity
// and keeps its result for the progress query. A failure is reported there, never fatal.
func control(ctx workflow.Context, run *CrawlRun, signal string, activity, input any) {
	res := crawl.ControlResult{Signal: signal}
	if err := workflow.ExecuteLocalActivity(withLocal(ctx), activity, input).Get(ctx, &res); err != nil {
		res.Error = err.Error()
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
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           or(queue, defaultProcessQueue),
		StartToCloseTimeout: time.Hour,
		HeartbeatTimeout:    2 * time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: 5 * time.Second, MaximumInterval: time.Minute, MaximumAttempts: 5},
	})
	var a *activities.Archiver
	var res activities.ArchiveResult
	if err := workflow.ExecuteActivity(actx, a.WriteWARC, activities.ArchiveInput{CrawlID: crawlID, Final: final}).Get(ctx, &res); err != nil {
		workflow.GetLogger(ctx).Warn("writing WARC files failed", "crawl", crawlID, "error", err)
	}
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
		WorkflowID:        fmt.Sprintf("%s/reprocess/%s-%d", info.WorkflowExecution.ID, info.OriginalRunID, tick),
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
	spec := in.Spec.WithDefaults()
	if err := spec.Validate(); err != nil {
		return crawl.CrawlProgress{}, temporal.NewNonRetryableApplicationError("invalid crawl spec: "+err.Error(), "InvalidSpec", err)
	}
	info := workflow.GetInfo(ctx)
	crawlID := spec.Name
	if crawlID == "" { // crawl/<name>, after any deployment prefix (TRAWLER_ID_PREFIX)
		crawlID = info.WorkflowExecution.ID
		if i := strings.LastIndex(crawlID, "crawl/"); i >= 0 {
			crawlID = crawlID[i+len("crawl/"):]
		}
	}
	run := in.Run
	if run == nil {
		run = &CrawlRun{}
	}
	_ = workflow.UpsertTypedSearchAttributes(ctx, activities.SearchCrawlID.ValueSet(crawlID))
	lctx := withLocal(ctx)
	var f *activities.Frontier
	var progress crawl.CrawlProgress
	if err := workflow.SetQueryHandler(ctx, crawl.QueryProgress, func() (crawl.CrawlProgress, error) { return progress, nil }); err != nil {
		return progress, err
	}
	if !run.Started {
		var started activities.StartCrawlResult
		if err := workflow.ExecuteLocalActivity(lctx, f.StartCrawl, activities.StartCrawlInput{CrawlID: crawlID, Spec: spec}).Get(ctx, &started); err != nil {
			return progress, err
		}
		run.Started, run.Invalid, run.ProcessQueue = true, started.Invalid, started.ProcessQueue
	}
	refresh := func() error {
		var p crawl.CrawlProgress
		if err := workflow.ExecuteLocalActivity(lctx, f.Progress, crawlID).Get(ctx, &p); err != nil {
			return err
		}
		p.InvalidSeed, p.Controls = run.Invalid, run.Controls
		progress = p
		workflow.SetCurrentDetails(ctx, fmt.Sprintf("**%s** · %d of %d URLs fetched · %d pages · %d pending · %d errors · %d dead · %.1f pages/s",
			p.State, p.Fetched, p.Admitted, p.Pages, p.Pending, p.Errors, p.Dead, p.PagesPerSec))
		return nil
	}
	setState := func(s string) error {
		return workflow.ExecuteLocalActivity(lctx, f.SetCrawlState, crawlID, s).Get(ctx, nil)
	}
	wake := func(staleFor time.Duration) {
		if err := workflow.ExecuteLocalActivity(lctx, f.WakeStale, crawlID, staleFor).Get(ctx, nil); err != nil {
			workflow.GetLogger(ctx).Warn("waking stale hosts failed", "crawl", crawlID, "error", err)
		}
	}
	if err := refresh(); err != nil {
		return progress, err
	}
	// Hosts of revision 3 hand their pages to the crawl's own processing children.
	var procs *crawlProcessing
	if workflow.GetVersion(ctx, "crawl-processing", workflow.DefaultVersion, 1) == 1 {
		procs = &crawlProcessing{crawlID: crawlID, queue: run.ProcessQueue}
		defer procs.started(ctx)
	}
	pauseCh := workflow.GetSignalChannel(ctx, crawl.SignalPause)
	resumeCh := workflow.GetSignalChannel(ctx, crawl.SignalResume)
	stopCh := workflow.GetSignalChannel(ctx, crawl.SignalStop)
	seedsCh := workflow.GetSignalChannel(ctx, crawl.SignalAddSeeds)
	replayCh := workflow.GetSignalChannel(ctx, crawl.SignalReplay)
	blockCh := workflow.GetSignalChannel(ctx, crawl.SignalBlock)
	var stopped bool
	for tick := 1; ; tick++ {
		if info := workflow.GetInfo(ctx); info.GetContinueAsNewSuggested() || info.GetCurrentHistoryLength() > 3000 {
			if procs != nil {
				procs.started(ctx) // before the last look at the signals: a wait here could hide one
			}
			_ = workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
			if pauseCh.Len()+resumeCh.Len()+stopCh.Len()+seedsCh.Len()+replayCh.Len()+blockCh.Len() == 0 {
				return progress, workflow.NewContinueAsNewError(ctx, CrawlWorkflow, CrawlInput{Spec: in.Spec, Run: run})
			}
		}
		var sigErr error
		tctx, cancel := workflow.WithCancel(ctx)
		sel := workflow.NewSelector(ctx)
		sel.AddFuture(workflow.NewTimer(tctx, spec.ProgressInterval.D()), func(workflow.Future) {})
		if procs != nil && !stopped {
			procs.keep(ctx)
			procs.addTo(ctx, sel)
		}
		sel.AddReceive(pauseCh, func(c workflow.ReceiveChannel, _ bool) {
			c.Receive(ctx, nil)
			run.Paused, sigErr = true, setState(store.CrawlPaused)
		})
		sel.AddReceive(resumeCh, func(c workflow.ReceiveChannel, _ bool) {
			c.Receive(ctx, nil)
			run.Paused, sigErr = false, setState(store.CrawlRunning)
			wake(0)
		})
		sel.AddReceive(stopCh, func(c workflow.ReceiveChannel, _ bool) {
			c.Receive(ctx, nil)
			stopped, sigErr = true, setState(store.CrawlStopped)
		})
		sel.AddReceive(seedsCh, func(c workflow.ReceiveChannel, _ bool) {
			var in crawl.AddSeeds
			c.Receive(ctx, &in)
			control(ctx, run, crawl.SignalAddSeeds, f.AddSeeds, activities.AddSeedsInput{CrawlID: crawlID, Seeds: in})
		})
		sel.AddReceive(replayCh, func(c workflow.ReceiveChannel, _ bool) {
			var in crawl.Replay
			c.Receive(ctx, &in)
			control(ctx, run, crawl.SignalReplay, f.ReplayDeadLetters, activities.ReplayInput{CrawlID: crawlID, Replay: in})
		})
		sel.AddReceive(blockCh, func(c workflow.ReceiveChannel, _ bool) {
			var in crawl.Block
			c.Receive(ctx, &in)
			control(ctx, run, crawl.SignalBlock, f.Block, activities.BlockInput{CrawlID: crawlID, Block: in})
		})
		sel.Select(ctx)
		cancel()
		if sigErr != nil {
			return progress, sigErr
		}
		if err := refresh(); err != nil {
			return progress, err
		}
		archiving := workflow.GetVersion(ctx, "warc-archive", workflow.DefaultVersion, 1) == 1
		if stopped || progress.State == store.CrawlStopped {
			if archiving {
				// No request starts after the stop (a batch checks its claim before each one), but
				// those already sent still record their fetches: let them land, so the final WARC
				// file holds them too.
				_ = workflow.Sleep(ctx, spec.RequestTimeout.D()+5*time.Second)
				archive(ctx, crawlID, run.ProcessQueue, true)
			}
			return progress, nil
		}
		if progress.Pending == 0 && !run.Paused {
			if archiving {
				archive(ctx, crawlID, run.ProcessQueue, true)
			}
			if err := setState(store.CrawlDone); err != nil {
				return progress, err
			}
			progress.State = store.CrawlDone
			return progress, nil
		}
		if archiving && tick%archiveEvery == 0 {
			archive(ctx, crawlID, run.ProcessQueue, false)
		}
		if !run.Paused && tick%6 == 0 {
			wake(staleAfter)
			if workflow.GetVersion(ctx, "sweep-stale-fetched", workflow.DefaultVersion, 1) == 1 {
				reprocess(ctx, crawlID, tick)
			}
		}
	}
}
