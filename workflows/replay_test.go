package workflows

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/trawlerdev/trawler/internal/crawl"
)

// Histories recorded from real runs (testdata/rev<N>_*_history.json, exported with `temporal
// workflow show -o json`) must replay with today's code: a change that breaks determinism
// fails here. Each file is named for the revision that recorded it; only kept revisions have
// files (doc.go). Revision 6: a running crawl with its hosts throttled, paused and resumed; a
// small host whose run is one local lease; a host whose local lease is followed by an
// activity lease; hosts whose activity leases a pause and a throttle cancelled, told through
// Postgres without a version marker, then resumed. Revision 5: a running crawl (the same
// signals) with its CrawlProcessingWorkflow children, one of them, hosts running paused and
// throttled, and a host whose leases a throttle and a pause cancelled, each told through
// Postgres (the "lease-told" change: a version marker and a local activity's).
// Re-record only together with a deliberate, versioned change.
func TestReplayRecordedHistories(t *testing.T) {
	files, err := filepath.Glob("testdata/rev*_history.json")
	if err != nil || len(files) < 10 {
		t.Fatalf("recorded histories: %v %v", files, err)
	}
	// The workflow IDs of histories whose child IDs are built from their own (the replayer
	// otherwise runs them under a made-up ID).
	ids := map[string]string{"rev5_running_crawl_history.json": "rec7/crawl/rec7",
		"rev6_running_crawl_history.json": "test-70cffe54/crawl/rec8"}
	for _, f := range files {
		if base := filepath.Base(f); !strings.HasPrefix(base, "rev"+strconv.Itoa(crawl.WorkflowRevision)+"_") &&
			!strings.HasPrefix(base, "rev"+strconv.Itoa(crawl.WorkflowRevision-1)+"_") {
			t.Errorf("%s: a history of a revision that is not kept (doc.go): delete it with its code", f)
		}
		r := worker.NewWorkflowReplayer()
		r.RegisterWorkflow(CrawlWorkflow)
		r.RegisterWorkflow(HostWorkflow)
		r.RegisterWorkflow(ProcessPageWorkflow)
		r.RegisterWorkflow(CrawlProcessingWorkflow)
		if err := replayFile(r, f, ids[filepath.Base(f)]); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func replayFile(r worker.WorkflowReplayer, file, id string) error {
	if id == "" {
		return r.ReplayWorkflowHistoryFromJSONFile(nil, file)
	}
	h, err := readHistory(file)
	if err != nil {
		return err
	}
	return r.ReplayWorkflowHistoryWithOptions(nil, h, worker.ReplayWorkflowHistoryOptions{
		OriginalExecution: workflow.Execution{ID: id}})
}

func readHistory(file string) (*history.History, error) {
	fh, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	return client.HistoryFromJSON(fh, client.HistoryJSONOptions{})
}

// startInput decodes the input a recorded run was started with.
func startInput(t *testing.T, file string, into any) {
	t.Helper()
	h, err := readHistory(file)
	if err != nil {
		t.Fatal(err)
	}
	in := h.GetEvents()[0].GetWorkflowExecutionStartedEventAttributes().GetInput()
	if err := converter.GetDefaultDataConverter().FromPayloads(in, into); err != nil {
		t.Fatal(err)
	}
}

// A host workflow running when the new code is deployed carries over onto the live revision:
// the input it was started with (recorded from a running crawl) runs on today's code, and
// its Continue-As-New carries its host, pacing and state into a run of the live revision.
func TestRunningHostCarriesOverToTheLiveRevision(t *testing.T) {
	var in crawl.HostInput
	startInput(t, "testdata/rev5_running_host_throttled_history.json", &in)
	if in.Host != "h0001.test" || in.Config.FetchLease == 0 {
		t.Fatalf("recorded input %+v", in)
	}
	e := newHostEnv(t)
	e.claimsOf(100, 2)
	e.fetchOK()
	in.Config.MaxRunBatches = 3
	e.ExecuteWorkflow(HostWorkflow, in)
	next := continuedInput(t, e.GetWorkflowError())
	if next.Revision != crawl.WorkflowRevision || next.Host != in.Host || next.State.Runs != in.State.Runs+1 {
		t.Errorf("carried over as %+v, want revision %d of %s", next, crawl.WorkflowRevision, in.Host)
	}
	if next.State.Fetched != in.State.Fetched+6 || next.Config.Delay != in.Config.Delay || next.Config.FetchQueue != in.Config.FetchQueue {
		t.Errorf("state or pacing lost: %+v (was %+v)", next, in)
	}
}

// A crawl workflow running when the new code is deployed runs on: the input a running crawl
// was started with (recorded) starts, runs and ends on today's code with its spec intact.
func TestRunningCrawlCarriesOverToTheLiveRevision(t *testing.T) {
	var in CrawlInput
	startInput(t, "testdata/rev5_running_crawl_history.json", &in)
	if in.Name != "rec7" || in.MaxPages != 5000 {
		t.Fatalf("recorded input %+v", in.Spec)
	}
	e := newCrawlEnv(t, time.Minute)
	e.ExecuteWorkflow(CrawlWorkflow, in)
	if p := e.result(t); p.State != crawl.CrawlDone {
		t.Errorf("ended %q, want done", p.State)
	}
	if len(e.started) != 1 || e.started[0].CrawlID != "rec7" || e.started[0].Spec.MaxPagesPerHost != 300 {
		t.Errorf("started %+v, want the recorded spec", e.started)
	}
}
