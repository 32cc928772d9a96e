package activities

import (
	"context"

	"go.temporal.io/sdk/activity"

	"github.com/trawlerdev/trawler/internal/clock"
	"github.com/trawlerdev/trawler/internal/crawl"
)

// keepAlive heartbeats details() every crawl.HeartbeatEvery until the returned stop is called
// or ctx ends.
func keepAlive(ctx context.Context, details func() any) (stop func()) {
	return clock.Every(ctx, crawl.HeartbeatEvery, func() { activity.RecordHeartbeat(ctx, details()) })
}
