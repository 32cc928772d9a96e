// Revision 5 of the host workflow, kept while host runs started by it can be open (doc.go):
// every lease was an activity on the fetch queue (hostRun.localLeaseFor says none for these
// runs), and telling a cancelled lease through Postgres was a workflow.GetVersion change within
// the revision. Reached only from tellLease, for runs whose HostInput.Revision is 5.

package workflows

import "go.temporal.io/sdk/workflow"

// leaseToldChange is revision 5's change that tells a cancelled lease through Postgres
// (tellLease): runs replaying a history recorded before it tell nothing.
const leaseToldChange = "lease-told"

// rev5LeaseTold says whether a revision-5 run tells a cancelled lease through Postgres.
func rev5LeaseTold(ctx workflow.Context) bool {
	return workflow.GetVersion(ctx, leaseToldChange, workflow.DefaultVersion, 1) != workflow.DefaultVersion
}
