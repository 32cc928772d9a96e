package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/trawlerdev/trawler/activities"
)

// HealthCheckInput names the activity task queues to probe.
type HealthCheckInput struct {
	TaskQueues []string `json:"taskQueues"`
}

// HealthCheckResult holds one report per probed task queue, in input order.
type HealthCheckResult struct {
	Reports []QueueHealth `json:"reports"`
}

// QueueHealth is the answer from a worker polling one task queue.
type QueueHealth struct {
	TaskQueue string                  `json:"taskQueue"`
	Report    activities.HealthReport `json:"report"`
}

// HealthCheckWorkflow proves the whole path works: a workflow task on the workflow queue, then
// an activity on each given queue, each run by a worker that reaches Postgres and MinIO.
func HealthCheckWorkflow(ctx workflow.Context, in HealthCheckInput) (HealthCheckResult, error) {
	var h *activities.Health
	var out HealthCheckResult
	for _, q := range in.TaskQueues {
		actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			TaskQueue:              q,
			ScheduleToCloseTimeout: 30 * time.Second,
			StartToCloseTimeout:    10 * time.Second,
			RetryPolicy:            &temporal.RetryPolicy{MaximumAttempts: 3},
		})
		var r activities.HealthReport
		if err := workflow.ExecuteActivity(actx, h.Check).Get(ctx, &r); err != nil {
			return out, err
		}
		out.Reports = append(out.Reports, QueueHealth{TaskQueue: q, Report: r})
	}
	return out, nil
}
