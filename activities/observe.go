package activities

import (
	"context"
	"fmt"
	"log/slog"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/log"

	"github.com/trawlerdev/trawler/internal/metrics"
	"github.com/trawlerdev/trawler/internal/store"
)

// count adds n to a counter series with the given tags (key, value, key, value …).
func count(ctx context.Context, name string, n int64, tags ...string) {
	if n == 0 || !activity.IsActivity(ctx) {
		return
	}
	h := activity.GetMetricsHandler(ctx)
	if len(tags) > 0 {
		m := make(map[string]string, len(tags)/2)
		for i := 0; i+1 < len(tags); i += 2 {
			m[tags[i]] = tags[i+1]
		}
		h = h.WithTags(m)
	}
	h.Counter(name).Inc(n)
}

// observeFetch records one request's outcome in the fetch series.
func observeFetch(ctx context.Context, o store.FetchOutcome) {
	if !activity.IsActivity(ctx) {
		return
	}
	if o.SkipReason == "blocked address" {
		count(ctx, metrics.Refused, 1)
		return
	}
	class := "error"
	if o.Status > 0 {
		class = fmt.Sprintf("%dxx", o.Status/100)
	}
	count(ctx, metrics.Fetches, 1, "status_class", class)
	count(ctx, metrics.FetchBytes, o.Bytes)
	if o.Status == 304 {
		count(ctx, metrics.NotModified, 1)
	}
	if o.Status > 0 || o.Err != "" {
		activity.GetMetricsHandler(ctx).Timer(metrics.FetchLatency).Record(o.Duration)
	}
	switch {
	case o.State == store.StateDead:
		count(ctx, metrics.DeadLetters, 1)
	case o.Err != "" && o.State == store.StateQueued:
		count(ctx, metrics.Retries, 1)
	}
}

// loggerFor is the activity's logger (with its workflow and activity fields) inside an
// activity, else the process logger: admission also runs in the HTTP API's process.
func loggerFor(ctx context.Context) log.Logger {
	if activity.IsActivity(ctx) {
		return activity.GetLogger(ctx)
	}
	return log.NewStructuredLogger(slog.Default())
}
