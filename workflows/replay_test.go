package workflows

import (
	"path/filepath"
	"testing"

	"go.temporal.io/sdk/worker"
)

// Histories recorded from real runs (testdata/*.json, exported with `temporal workflow show
// -o json`) must replay with today's code: a change that breaks determinism fails here.
// The host histories cover throttle, pause and resume signals, a cancelled batch, child
// workflows and timers, before and after the "amortised-batches" version (in-batch waits,
// children started without a task of their own, claims when processing completes), and
// batches interrupted by pause and throttle handed back by owner ("abandon-by-owner").
// Re-record only together with a deliberate, versioned change.
func TestReplayRecordedHistories(t *testing.T) {
	files, err := filepath.Glob("testdata/*_history.json")
	if err != nil || len(files) < 3 {
		t.Fatalf("recorded histories: %v %v", files, err)
	}
	for _, f := range files {
		r := worker.NewWorkflowReplayer()
		r.RegisterWorkflow(CrawlWorkflow)
		r.RegisterWorkflow(HostWorkflow)
		r.RegisterWorkflow(ProcessPageWorkflow)
		if err := r.ReplayWorkflowHistoryFromJSONFile(nil, f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}
