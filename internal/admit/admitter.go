package admit

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/log"
	"golang.org/x/time/rate"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/failpoint"
	"github.com/trawlerdev/trawler/internal/policy"
	"github.com/trawlerdev/trawler/internal/seen"
	"github.com/trawlerdev/trawler/internal/store"
)

// Admitter puts candidate URLs into a crawl's frontier and wakes the hosts that got new ones.
type Admitter struct {
	Store *store.Store
	Waker *Waker
	Seen  *seen.Filter // nil: every candidate goes to Postgres
	// Wakes bounds how many hosts link admissions wake per second (nil: no bound). Hosts
	// beyond it keep their URLs queued and stay waiting: the next admission, or the crawl's
	// sweep of hosts whose due URLs wait, wakes them.
	Wakes *rate.Limiter
	// Backlog holds link admissions' wake-ups back while Temporal is behind (nil: never).
	Backlog *Backlog
}

// AdmitStats is what an admission did.
type AdmitStats struct {
	New        int `json:"new"`
	Duplicates int `json:"duplicates"`
	OverBudget int `json:"overBudget"`
	BloomSkips int `json:"bloomSkips"`
	Hosts      int `json:"hosts"`
}

// Admit adds candidates to the crawl's frontier and wakes the hosts that were waiting for them.
// Admission clears a host's waiting flag in its transaction, so a process that died between
// that commit and the signal would leave the host asleep: a retried activity (which admits the
// same URLs again, as duplicates) wakes every host that has one of them queued.
func (a *Admitter) Admit(ctx context.Context, ci *policy.Crawl, cands []store.Candidate) (AdmitStats, error) {
	return a.admitWaking(ctx, ci, cands, activity.IsActivity(ctx) && activity.GetInfo(ctx).Attempt > 1, false)
}

// AdmitSeeds is Admit for seeds and replays, which wake every host with one of them queued:
// they come from a crawl's start or an operator, whose local activity may run again after a
// worker died with nothing to say it is a retry, and a host's waiting flag may be stale from a
// crawl whose workers were killed.
func (a *Admitter) AdmitSeeds(ctx context.Context, ci *policy.Crawl, cands []store.Candidate) (AdmitStats, error) {
	return a.admitWaking(ctx, ci, cands, true, true)
}

// AdmitSeedsWakingLater is AdmitSeeds for a crawl's start: it returns once the seeds are
// admitted and leaves their hosts to the Waker's background wake (Waker.WakeLater). The
// crawl workflow waits for its start before it starts its processing children, and a
// thousand host starts take the Temporal server seconds: started first, the processing is
// there for the hosts' first pages, whose links are what keeps the hosts busy. A wake lost
// with its process is a wake that failed: the crawl's sweep wakes the hosts.
func (a *Admitter) AdmitSeedsWakingLater(ctx context.Context, ci *policy.Crawl, cands []store.Candidate) (AdmitStats, error) {
	return a.admit(ctx, ci, cands, true, true, func(ctx context.Context, crawlID string, cfg crawl.HostConfig, hosts []string) error {
		a.Waker.WakeLater(crawlID, cfg, hosts)
		return nil
	})
}

// admitWaking admits cands and wakes their hosts that were waiting, within the wake rate and
// not while Temporal is behind, unless forced (seeds); wakeQueued (a retry, seeds) also wakes
// every host with one of cands queued.
func (a *Admitter) admitWaking(ctx context.Context, ci *policy.Crawl, cands []store.Candidate, wakeQueued, force bool) (AdmitStats, error) {
	return a.admit(ctx, ci, cands, wakeQueued, force, a.Waker.Wake)
}

// admit is admitWaking with the wake-up given.
func (a *Admitter) admit(ctx context.Context, ci *policy.Crawl, cands []store.Candidate, wakeQueued, force bool,
	wake func(ctx context.Context, crawlID string, cfg crawl.HostConfig, hosts []string) error) (AdmitStats, error) {
	var st AdmitStats
	keep := cands[:0:0]
	for _, c := range cands {
		// A sitemap's <lastmod> can bring a known URL's recrawl forward: Postgres decides.
		if c.LastMod.IsZero() && a.Seen.Skip(ci.ID, c.Hash) {
			st.BloomSkips++
			continue
		}
		keep = append(keep, c)
	}
	maxWake := -1
	if !force && a.Backlog.Behind(ctx) {
		// Temporal is behind, which is also when activities time out and retry: a retry waking
		// every host it names would feed the backlog that made it retry. The crawl's sweep
		// wakes these hosts once it has drained.
		maxWake, wakeQueued = 0, false
	} else if a.Wakes != nil && !wakeQueued {
		maxWake = max(int(a.Wakes.Tokens()), 0)
	}
	res, err := a.Store.Frontier().Admit(ctx, ci.ID, keep, Budget(ci.Spec.Requisites.PerPage()), maxWake)
	if err != nil {
		return st, err
	}
	if maxWake > 0 && len(res.Wake) > 0 {
		a.Wakes.ReserveN(time.Now(), len(res.Wake)) // at most the tokens seen: never refused
	}
	hashes := make([][]byte, len(keep))
	for i, c := range keep {
		hashes[i] = c.Hash
	}
	failpoint.Hit(failpoint.LinksAdmitted)
	a.Seen.Add(ci.ID, hashes)
	st.Duplicates, st.OverBudget = res.Duplicates, res.OverBudget
	for _, n := range res.New {
		st.New += n
	}
	st.Hosts = len(res.New)
	// Only hosts waiting for work are signalled: a busy one claims the new URLs after its
	// batch. This is most of what admission used to cost in workflow history.
	if wakeQueued && len(cands) > 0 {
		all := make([][]byte, len(cands))
		for i, c := range cands {
			all[i] = c.Hash
		}
		queued, err := a.Store.Frontier().QueuedHosts(ctx, ci.ID, all)
		if err != nil {
			return st, err
		}
		res.Wake = union(res.Wake, queued)
	}
	if len(res.Wake) > 0 {
		if err := wake(ctx, ci.ID, crawl.HostConfigFrom(ci.Spec), res.Wake); err != nil {
			// The URLs are safe in Postgres, and the crawl's sweep wakes hosts that missed a
			// signal; failing here would only admit the same URLs again.
			logger(ctx).Warn("waking hosts failed; the crawl sweep will retry", "crawl", ci.ID, "error", err)
		}
	}
	return st, nil
}

// union is the sorted set of a and b's elements.
func union(a, b []string) []string {
	out := slices.Concat(a, b)
	slices.Sort(out)
	return slices.Compact(out)
}

// logger is the activity's logger when admission runs in one (its lines carry the activity),
// the process's otherwise (the HTTP API).
func logger(ctx context.Context) log.Logger {
	if activity.IsActivity(ctx) {
		return activity.GetLogger(ctx)
	}
	return log.NewStructuredLogger(slog.Default())
}
