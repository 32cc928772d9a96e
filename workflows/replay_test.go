package workflows

import (
	"os"
	"path/filepath"
	"testing"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// Histories recorded from real runs (testdata/*.json, exported with `temporal workflow show
// -o json`) must replay with today's code: a change that breaks determinism fails here.
// The host histories cover throttle, pause and resume signals, a cancelled batch, child
// workflows and timers, before and after the "amortised-batches" version (in-batch waits,
// children started without a task of their own, claims when processing completes),
// batches interrupted by pause and throttle handed back by owner ("abandon-by-owner"), and
// revision 3 (host_rev3_*: leases with no processing child of their own; a dry host ending
// at once; a throttled one idling out its timeout after a lease cancelled by throttle and
// pause) with the crawl's processing children (crawl_processing, process_crawl), and
// revision 4 (host_rev4_*: leases that claim their own URLs; a host of one page; a lease
// cancelled by throttle and by pause, handed back by owner, then resumed; a host started by a
// pause signal).
// Re-record only together with a deliberate, versioned change.
func TestReplayRecordedHistories(t *testing.T) {
	files, err := filepath.Glob("testdata/*_history.json")
	if err != nil || len(files) < 3 {
		t.Fatalf("recorded histories: %v %v", files, err)
	}
	// The workflow IDs of histories whose child IDs are built from their own (the replayer
	// otherwise runs them under a made-up ID).
	ids := map[string]string{"crawl_processing_history.json": "crawl/rec3",
		"rev4_done_crawl_history.json": "rec5/crawl/rec5", "rev4_running_crawl_history.json": "rec6/crawl/rec6"}
	for _, f := range files {
		r := worker.NewWorkflowReplayer()
		r.RegisterWorkflow(CrawlWorkflow)
		r.RegisterWorkflow(HostWorkflow)
		r.RegisterWorkflow(ProcessPageWorkflow)
		if err := replayFile(r, f, ids[filepath.Base(f)]); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func replayFile(r worker.WorkflowReplayer, file, id string) error {
	if id == "" {
		return r.ReplayWorkflowHistoryFromJSONFile(nil, file)
	}
	fh, err := os.Open(file)
	if err != nil {
		return err
	}
	defer fh.Close()
	h, err := client.HistoryFromJSON(fh, client.HistoryJSONOptions{})
	if err != nil {
		return err
	}
	return r.ReplayWorkflowHistoryWithOptions(nil, h, worker.ReplayWorkflowHistoryOptions{
		OriginalExecution: workflow.Execution{ID: id}})
}
