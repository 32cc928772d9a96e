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

// DeliverInput asks for one run of an output's delivery; MaxAttempts is the retry policy's,
// so the last try knows to dead-letter a batch it cannot deliver.
type DeliverInput struct {
	deliver.Input
	MaxAttempts int `json:"maxAttempts"`
}

// DeliverResult says what the run delivered and whether the output is done.
type DeliverResult = deliver.Result

// Deliver sends what the output has not delivered yet, for up to half a minute.
func (a *Deliverer) Deliver(ctx context.Context, in DeliverInput) (DeliverResult, error) {
	try := deliver.Try{Attempt: int(activity.GetInfo(ctx).Attempt), MaxAttempts: in.MaxAttempts}
	return a.Outputs.Run(ctx, in.Input, try, func(r deliver.Result) { activity.RecordHeartbeat(ctx, r) })
}
