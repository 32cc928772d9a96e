package workflows

import (
	"context"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"

	"github.com/trawlerdev/trawler/internal/crawl"
)

// A crawl's processing run is given a minute without a landed heartbeat before the server
// retries it: its beats only find a dead worker, and at 20 s a busy server timed out a run
// that was processing 200 pages a second. Other processing keeps processHeartbeatTimeout.
func TestACrawlsProcessingRunOutlastsLateHeartbeats(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterActivityWithOptions(func(ctx context.Context, in crawl.CrawlProcessing) (crawl.ProcessResult, error) {
		return crawl.ProcessResult{Documents: 1}, nil
	}, activity.RegisterOptions{Name: "ProcessCrawl"}) // (*activities.Processor).ProcessCrawl
	var got time.Duration
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		got = info.HeartbeatTimeout
	})
	env.ExecuteWorkflow(CrawlProcessingWorkflow, crawl.CrawlProcessing{CrawlID: "c", Owner: "o", For: time.Minute})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if got < time.Minute || processHeartbeatTimeout >= time.Minute {
		t.Fatalf("heartbeat timeout of a crawl's processing run %v (other processing: %v); want a minute, more than the others'",
			got, processHeartbeatTimeout)
	}
}
