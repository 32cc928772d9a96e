package activities

import (
	"errors"
	"strings"
	"testing"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/store"
)

// A workflow worker whose local leases are all taken answers at once with ErrLocalLeasesBusy
// (the host workflow runs an activity lease instead); one without a fetch stage says so.
func TestLocalLeaseAnswersBusyWhenEverySlotIsTaken(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	f := &Fetcher{Store: &store.Store{}, LocalSlots: make(chan struct{}, 1)}
	f.LocalSlots <- struct{}{} // the one slot is taken
	env := s.NewTestActivityEnvironment()
	_, err := env.ExecuteLocalActivity(f.FetchLocalLease, FetchLeaseInput{Host: "h.test"})
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != crawl.ErrLocalLeasesBusy || !app.NonRetryable() {
		t.Fatalf("local lease with every slot taken: %v, want a non-retryable %s", err, crawl.ErrLocalLeasesBusy)
	}
	if len(f.LocalSlots) != 1 {
		t.Errorf("%d slots taken after a refusal, want the one held", len(f.LocalSlots))
	}
	_, err = env.ExecuteLocalActivity((&Fetcher{}).FetchLocalLease, FetchLeaseInput{Host: "h.test"})
	if err == nil || !strings.Contains(err.Error(), errNoFetchStage.Error()) {
		t.Errorf("local lease without a fetch stage: %v", err)
	}
}
