package activities

import (
	"context"

	"go.temporal.io/sdk/activity"
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
