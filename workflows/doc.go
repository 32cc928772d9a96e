// Package workflows holds Trawler's Temporal workflows: a crawl's (crawl.go), a host's
// (host*.go) and the processing children (process.go). Workflow code is deterministic: no
// I/O, no wall clock, no goroutines, no map-order dependence; every effect goes through an
// activity, a timer or a signal.
//
// # Revisions
//
// Workflows run for days and are replayed by whatever code a worker runs, so a change to the
// commands a workflow issues for a given history (what it schedules, in which order, under
// which IDs) is a new revision. The rule:
//
//   - One live revision, crawl.WorkflowRevision, for all of the workflows. A change makes a
//     new one and raises it. Host runs carry the revision that started them
//     (crawl.HostInput.Revision; the host starter and Continue-As-New set the live one).
//   - Carried over at the next Continue-As-New: a host continues as new after at most
//     MaxRunBatches leases or MaxHistory events, and a dry host ends (its next start is of
//     the live revision); a crawl continues as new after 3,000 events (about 40 minutes at
//     the default progress interval); a processing child ends after 5 minutes.
//   - Kept: the previous revision only, for as long as its runs can be open. Its code lives
//     in files named for it (*_rev<N>.go), reached from the live code by one branch per
//     change and nothing else: on HostInput.Revision in the host workflow, or, in the crawl
//     workflow (operators start it with plain JSON, so its input carries no revision), on one
//     workflow.GetVersion change ID whose default version is the previous revision. Its
//     recorded histories are testdata/rev<N>_*, replayed by replay_test.go with the live
//     revision's.
//   - Deleted: in the first release after the one that made it the previous revision, with
//     its GetVersion call (the SDK skips the markers of a removed call). Before deploying
//     that release, check that none of its runs is open, e.g. `temporal workflow count
//     --query 'ExecutionStatus="Running" AND StartTime < "<when the previous release was
//     deployed>"'` answers 0: every run since was started or continued by that release.
//
// Applied in this release: revision 6 is live (a host run's first lease is a local activity in
// the workflow worker, host_local_lease.go; a cancelled lease is always told through
// Postgres), revision 5 is kept (host_fetch_rev5.go: its host runs' "lease-told"
// workflow.GetVersion change; testdata/rev5_*, among them the histories of a running crawl,
// its processing children and hosts, and tests that run their inputs on today's code up to the
// carry-over). Revision 4 (a crawl's processing children as ProcessPageWorkflow, and the
// crawl's "crawl-processing-workflow" GetVersion call that told its runs apart) is deleted:
// revision 5 was live in the release before this one, which carried its runs over.
//
// One change of the crawl workflow within revision 6 (its input carries no revision, so the
// crawl's changes are GetVersion calls alone): "archive-async" (crawl_archive.go), a running
// crawl's WARC updates no longer hold its loop. Its default version is the waiting update of
// every crawl run recorded before it, revisions 5 and 6 (archiveAndWait, kept in
// crawl_archive_rev6.go and replayed with testdata/rev5_* and rev6_*); both go, with the
// GetVersion call, in the first release after the next, once no crawl run older than this
// release is open (the check above).
package workflows
