package activities

import (
	"context"

	"go.temporal.io/sdk/activity"

	"github.com/trawlerdev/trawler/internal/admit"
	"github.com/trawlerdev/trawler/internal/metrics"
	"github.com/trawlerdev/trawler/internal/policy"
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

// admitDiscovered is the one admission path as every stage calls it (links, redirects,
// sitemaps, feeds, renders): admit.Admitter.AdmitDiscovered, counted in the links series
// (admitted, already seen, rejected by reason) of ctx's activity.
func admitDiscovered(ctx context.Context, a *admit.Admitter) func(context.Context, *policy.Crawl, *admit.Discovery) (admit.AdmitStats, error) {
	return func(actx context.Context, ci *policy.Crawl, d *admit.Discovery) (admit.AdmitStats, error) {
		st, err := a.AdmitDiscovered(actx, ci, d)
		if err != nil {
			return st, err
		}
		count(ctx, metrics.LinksAdmitted, int64(st.New))
		count(ctx, metrics.LinksSeen, int64(st.Duplicates))
		count(ctx, metrics.LinksRejected, int64(st.OverBudget), "reason", "budget")
		for reason, n := range d.Rejected {
			count(ctx, metrics.LinksRejected, int64(n), "reason", reason)
		}
		return st, nil
	}
}
