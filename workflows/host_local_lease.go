package workflows

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/trawlerdev/trawler/activities"
	"github.com/trawlerdev/trawler/internal/crawl"
)

// A host run's first lease runs as a local activity in the workflow worker (revision 6): most
// hosts of a real web have a few pages, and their whole run — start, one workflow task, the
// lease's marker, the end — is then 6 history events and about 3 writes of the run's state on
// the server, where an activity lease costs 11 events, its task queue's writes and reads and
// its timeout timers. The lease is short (HostConfig.LocalLease, and at most a third of the
// workflow task timeout) so that it ends inside the workflow task; a host with more to fetch
// goes on in activity leases on the fetch queue. A pause or throttle that arrives meanwhile
// takes effect when the local lease ends (the workflow sees signals between tasks).

// localLeaseShare is the part of the workflow task timeout a local lease may claim URLs for:
// its last chunk (as long again) and its requests' timeouts must still end inside the task.
const localLeaseShare = 3

// localLeaseEnd is the part of the workflow task timeout after which a local lease is stopped
// whatever it is doing (its start-to-close timeout; it then fails and its claims are handed
// back). It ends before the task can time out: a worker that takes the task up again after a
// hung or cut-off one never runs a second lease of the host beside the first.
const localLeaseEnd = 0.7

// localLeaseFor is how long this lease may run as a local activity, 0 when it must be an
// activity lease: only a run's first lease, of a run of revision 6 or later whose crawl turned
// local leases on, and not again once one failed in this run.
func (h *hostRun) localLeaseFor() time.Duration {
	if h.leases > 0 || h.localFailed || h.cfg.LocalLease <= 0 || h.revision() < 6 {
		return 0
	}
	return min(h.cfg.LocalLease.D(), workflow.GetInfo(h.ctx).WorkflowTaskTimeout/localLeaseShare)
}

// revision is the workflow revision this run replays (a run started by hand with plain JSON
// carries none and runs the live one).
func (h *hostRun) revision() int {
	if h.in.Revision == 0 {
		return crawl.WorkflowRevision
	}
	return h.in.Revision
}

// fetchLocal runs the lease as a local activity for at most window, with a chunk that covers
// no more than window of host time. ran is false when the local activity failed (the worker
// runs no fetch stage, or it broke): its claims are handed back and the caller runs an
// activity lease instead, which is not a host error.
func (h *hostRun) fetchLocal(window time.Duration) (res activities.FetchLeaseResult, ok, ran bool) {
	ctx := h.ctx
	h.owner = h.leaseOwner()
	d := h.delay()
	in := h.leaseInput(d)
	in.LeaseFor = window
	if d > 0 {
		in.Chunk = min(in.Chunk, max(int(window/d), 1))
	}
	in.ClaimTTL = time.Duration(in.Chunk)*(d+h.cfg.RequestTimeout.D()) + claimTTLSlack
	lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		Summary:             fmt.Sprintf("%s · lease %d, local · due URLs, up to %d a claim · delay %s", h.in.Host, h.leases+1, in.Chunk, d),
		StartToCloseTimeout: min(h.leaseTimeout(in, d), time.Duration(float64(workflow.GetInfo(ctx).WorkflowTaskTimeout)*localLeaseEnd)),
		// One attempt: a failed local lease is followed at once by an activity lease, which
		// takes over from Postgres what it fetched.
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1},
	})
	h.waitFor(fmt.Sprintf("fetch lease %d (local) to end", h.leases+1))
	h.busy = true
	h.leases++
	var f *activities.Fetcher
	err := workflow.ExecuteLocalActivity(lctx, f.FetchLocalLease, in).Get(ctx, &res)
	h.busy = false
	if err != nil {
		if busy := new(temporal.ApplicationError); errors.As(err, &busy) && busy.Type() == crawl.ErrLocalLeasesBusy {
			workflow.GetLogger(ctx).Debug("no local lease free; an activity lease goes on", "host", h.in.Host)
		} else {
			workflow.GetLogger(ctx).Warn("a local fetch lease failed; an activity lease goes on", "host", h.in.Host, "error", err)
		}
		h.abandon()
		h.localFailed = true
		return res, false, false
	}
	h.apply(res, d)
	return res, true, true
}
