package runner_test

import (
	"context"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/runner"
	"github.com/trawlerdev/trawler/internal/testenv"
	"github.com/trawlerdev/trawler/workflows"
)

// A workflow and its activities complete through real workers on the dev server, one per
// role (two for the workflow role: the crawls' queue and the hosts'), each reaching Postgres
// and MinIO.
func TestHealthCheckThroughRealWorkers(t *testing.T) {
	cfg := testenv.Config(t)
	db, _ := testenv.Postgres(t)
	blobs := testenv.Blob(t)
	tc := testenv.Temporal(t)

	r, err := runner.Start(tc, cfg, runner.Deps{DB: db, Blob: blobs})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	run, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: cfg.TaskQueue},
		workflows.HealthCheckWorkflow, workflows.HealthCheckInput{
			TaskQueues: []string{cfg.TaskQueue, crawl.HostQueue(cfg.TaskQueue), cfg.FetchTaskQueue, cfg.ProcessTaskQueue},
		})
	if err != nil {
		t.Fatal(err)
	}
	var res workflows.HealthCheckResult
	if err := run.Get(ctx, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Reports) != 4 {
		t.Fatalf("reports = %+v", res.Reports)
	}
	for _, q := range res.Reports {
		if q.Report.SchemaVersion < 1 || q.Report.PostgresVersion == "" || q.Report.Bucket != blobs.Bucket() {
			t.Errorf("queue %s: report %+v", q.TaskQueue, q.Report)
		}
	}
}
