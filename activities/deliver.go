package activities

import (
	"context"

	"go.temporal.io/sdk/activity"

	"github.com/trawlerdev/trawler/internal/deliver"
)

// Deliverer runs on the process task queue: it delivers a crawl's documents to one of its
// outputs (internal/deliver), heartbeating after each batch.
type Deliverer struct {
	Outputs *deliver.Deliverer
}

// DeliverInput asks for one run of an output's delivery.
type DeliverInput = deliver.Input

// DeliverResult says what the run delivered and whether the output is done.
type DeliverResult = deliver.Result

// Deliver sends what the output has not delivered yet, for up to half a minute. A batch's
// tries are counted in Postgres (its last dead-letters it); the activity's retries only space
// them out.
func (a *Deliverer) Deliver(ctx context.Context, in DeliverInput) (DeliverResult, error) {
	d := *a.Outputs
	d.Count = func(ctx context.Context, name, kind string, n int) { count(ctx, name, int64(n), "kind", kind) }
	return d.Run(ctx, in, func(r deliver.Result) { activity.RecordHeartbeat(ctx, r) })
}
