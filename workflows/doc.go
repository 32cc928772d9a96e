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
//   - One live revision. The live code has no branch on an older revision and no
//     workflow.GetVersion check: crawl.HostRevision names the host workflow's; the crawl and
//     processing workflows change in step with it.
//   - A new revision raises crawl.HostRevision. Runs carry the revision that started them
//     (crawl.HostInput.Revision; the host starter and Continue-As-New set the live one).
//   - Carried over at the next Continue-As-New: a host continues as new after at most
//     MaxRunBatches leases or MaxHistory events, and a dry host ends (its next start is of
//     the live revision); a crawl continues as new after 3,000 events (about 40 minutes at
//     the default progress interval); a processing child ends after 5 minutes.
//   - Kept: the previous revision only, for as long as its runs can be open. Its code lives
//     in files named for it (host_rev<N>.go), reached only by one dispatch on the input's
//     Revision at the workflow's entry; its recorded histories are testdata/rev<N>_*, replayed
//     by replay_test.go with the live revision's.
//   - Deleted: in the first release after the one that made it the previous revision. Before
//     deploying that release, check that none of its runs is open, e.g. `temporal workflow
//     count --query 'ExecutionStatus="Running" AND StartTime < "<when the previous release
//     was deployed>"'` answers 0 (every run since was started or continued by that release).
//
// Applied in this release: revision 4 is live and the only one kept (testdata/rev4_*, among
// them the histories of a running crawl, its hosts and processing children, and tests that
// their inputs run on and carry over to today's code). Host revisions 0 to 3 (a workflow
// that claimed for its leases, processing children per host or per lease, lease rows, batch
// top-ups) and the crawl's three GetVersion checks ("crawl-processing", "warc-archive",
// "sweep-stale-fetched", set on every run since) are deleted: revision 4 has been live since
// an earlier release, which carried their runs over. A removed GetVersion check is safe for
// histories that recorded its marker: the SDK skips version markers no call asks for.
package workflows
