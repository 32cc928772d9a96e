package workflows

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"

	"github.com/trawlerdev/trawler/activities"
	"github.com/trawlerdev/trawler/internal/crawl"
)

// localLeaseInput is a revision-6 host with local leases of up to 10 s, 1 s apart, started as
// the host starter starts it (crawl.HostTaskTimeout).
func localLeaseInput(e *hostEnv) crawl.HostInput {
	e.SetStartWorkflowOptions(client.StartWorkflowOptions{WorkflowTaskTimeout: crawl.HostTaskTimeout})
	in := leaseInput()
	in.Config.LocalLease = crawl.Duration(10 * time.Second)
	return in
}

// fetchLocally answers local leases as fetchOK answers activity leases, recording their
// inputs in local; fail makes every local lease fail instead.
func (e *hostEnv) fetchLocally(local *[]activities.FetchLeaseInput, fail bool) *testsuite.MockCallWrapper {
	return e.OnActivity(e.fetcher.FetchLocalLease, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.FetchLeaseInput) (activities.FetchLeaseResult, error) {
			*local = append(*local, in)
			if fail {
				return activities.FetchLeaseResult{}, context.DeadlineExceeded
			}
			urls, dry := e.lease()
			if dry != nil {
				return *dry, nil
			}
			e.fetches = append(e.fetches, e.Now())
			return activities.FetchLeaseResult{LeaseView: activities.FetchLeaseView{Done: len(urls), Fetched: len(urls)},
				LeaseFindings: activities.FetchLeaseFindings{LastRequestAt: e.Now()}}, nil
		})
}

// A small host's run is one local lease: it claims for at most the local lease (and a third of
// the workflow task timeout), a chunk of no more host time than that, and the run ends dry
// without an activity lease.
func TestSmallHostRunIsOneLocalLease(t *testing.T) {
	e := newHostEnv(t)
	var local []activities.FetchLeaseInput
	e.fetchLocally(&local, false)
	e.ExecuteWorkflow(HostWorkflow, localLeaseInput(e))
	if err := e.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if len(local) != 1 || len(e.leases) != 0 {
		t.Fatalf("%d local and %d activity leases, want 1 and 0", len(local), len(e.leases))
	}
	in := local[0]
	if in.LeaseFor != 10*time.Second || in.Chunk != 10 || in.Owner == "" {
		t.Errorf("local lease %+v: want 10 s, chunks of 10 URLs (10 s at 1 s), an owner", in)
	}
}

// A host with more to fetch goes on in activity leases after its local one; a plain-JSON start
// (the SDK's 10 s workflow task timeout) gets a local lease of a third of that.
func TestLocalLeaseIsFollowedByActivityLeases(t *testing.T) {
	e := newHostEnv(t)
	e.claimsOf(3, 4)
	var local []activities.FetchLeaseInput
	e.fetchLocally(&local, false)
	e.fetchOK()
	e.SetStartWorkflowOptions(client.StartWorkflowOptions{WorkflowTaskTimeout: 10 * time.Second})
	in := leaseInput()
	in.Config.LocalLease = crawl.Duration(10 * time.Second)
	e.ExecuteWorkflow(HostWorkflow, in)
	if err := e.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if len(local) != 1 || len(e.leases) != 3 { // 2 chunks, then the dry one
		t.Fatalf("%d local and %d activity leases, want 1 and 3", len(local), len(e.leases))
	}
	if d := local[0].LeaseFor; d != 10*time.Second/3 {
		t.Errorf("local lease of %v under a 10 s task timeout, want a third of it", d)
	}
	if e.leases[0].Owner == local[0].Owner || e.leases[0].LeaseFor != time.Minute {
		t.Errorf("activity lease %+v after local %+v: want its own owner and the crawl's lease", e.leases[0], local[0])
	}
}

// A local lease that fails (a workflow worker without a fetch stage, a broken one) hands back
// its claims and is followed at once by an activity lease: no host error, no backoff.
func TestFailedLocalLeaseFallsBackToAnActivityLease(t *testing.T) {
	e := newHostEnv(t)
	e.claimsOf(1, 2)
	var local []activities.FetchLeaseInput
	e.fetchLocally(&local, true)
	e.fetchOK()
	var abandoned []string
	e.OnActivity(e.frontier.Abandon, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.AbandonInput) error {
		abandoned = append(abandoned, in.Owners...)
		return nil
	})
	e.ExecuteWorkflow(HostWorkflow, localLeaseInput(e))
	if err := e.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if len(local) != 1 || len(e.leases) != 2 || len(e.fetches) != 1 {
		t.Fatalf("%d local leases, %d activity leases, %d fetched chunks; want 1, 2, 1", len(local), len(e.leases), len(e.fetches))
	}
	if len(abandoned) != 2 || abandoned[0] != local[0].Owner {
		t.Errorf("handed back %q, want the local lease's owners", abandoned)
	}
	if !e.leases[0].NotBefore.IsZero() {
		t.Errorf("the activity lease waits until %v: a failed local lease is no host error", e.leases[0].NotBefore)
	}
}

// A run of revision 5 (open when revision 6 is deployed) replays as it ran: no local lease.
func TestRevision5HostRunsNoLocalLease(t *testing.T) {
	e := newHostEnv(t)
	var local []activities.FetchLeaseInput
	e.fetchLocally(&local, false).Maybe()
	e.fetchOK()
	in := localLeaseInput(e)
	in.Revision = 5
	e.ExecuteWorkflow(HostWorkflow, in)
	if err := e.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if len(local) != 0 || len(e.leases) != 1 {
		t.Fatalf("%d local and %d activity leases, want 0 and 1", len(local), len(e.leases))
	}
}
