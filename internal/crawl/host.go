package crawl

import (
	"time"
)

// HostConfig is how a host workflow paces its host; it comes from the crawl that woke it.
type HostConfig struct {
	Delay          Duration `json:"delay"`
	MaxCrawlDelay  Duration `json:"maxCrawlDelay"`
	Concurrency    int      `json:"concurrency"`
	BatchWindow    Duration `json:"batchWindow"`
	FetchLease     Duration `json:"fetchLease,omitempty"` // 0 from a starter of older code: the default
	MaxBatch       int      `json:"maxBatch"`
	IdleTimeout    Duration `json:"idleTimeout"`
	RequestTimeout Duration `json:"requestTimeout"`
	// MaxHistory forces Continue-As-New after this many history events (besides the server's
	// suggestion).
	MaxHistory int `json:"maxHistory,omitempty"`
	// MaxRunBatches forces Continue-As-New after this many fetch leases in one run (its name
	// predates leases; kept for inputs already written).
	MaxRunBatches int `json:"maxRunBatches,omitempty"`
	// Task queues for the host's activities (the deployment's; default trawler-fetch and
	// trawler-process).
	FetchQueue   string `json:"fetchQueue,omitempty"`
	ProcessQueue string `json:"processQueue,omitempty"`
	// LocalLease is how long a host run's first fetch lease holds the host when it runs as a
	// local activity in the workflow worker (TRAWLER_LOCAL_LEASE, set by the host starter);
	// 0: every lease is an activity on FetchQueue.
	LocalLease Duration `json:"localLease,omitempty"`
}

// WithDefaults fills unset pacing fields with the spec's defaults (the deployment's limits,
// MaxHistory and MaxRunBatches, and its queues are the host workflow's to fill).
func (c HostConfig) WithDefaults() HostConfig {
	setDefault(&c.Delay, Duration(defaultDelay))
	setDefault(&c.MaxCrawlDelay, Duration(defaultMaxCrawlDelay))
	setDefault(&c.Concurrency, defaultConcurrency)
	setDefault(&c.BatchWindow, Duration(defaultBatchWindow))
	setDefault(&c.FetchLease, Duration(defaultFetchLease))
	setDefault(&c.MaxBatch, defaultMaxBatch)
	setDefault(&c.IdleTimeout, Duration(defaultIdleTimeout))
	setDefault(&c.RequestTimeout, Duration(defaultRequestTimeout))
	return c
}

// HostConfigFrom derives a host's pacing from a crawl spec (with defaults applied).
func HostConfigFrom(s Spec) HostConfig {
	return HostConfig{Delay: s.Delay, MaxCrawlDelay: s.MaxCrawlDelay, Concurrency: s.Concurrency,
		BatchWindow: s.BatchWindow, FetchLease: s.FetchLease, MaxBatch: s.MaxBatch, IdleTimeout: s.HostIdleTimeout, RequestTimeout: s.RequestTimeout}
}

// WorkflowRevision is the live revision of Trawler's workflows (workflows/doc.go says how
// revisions are kept and retired), which a host workflow run started or continued now carries
// (HostInput.Revision).
//   - 4: a host fetches in leases that claim their own URLs (one fetch activity holds the host
//     for up to FetchLease and makes the last claim when the host runs dry) and starts no
//     processing child (its crawls' processing children take every fetched page); a host whose
//     queue ran dry ends at once unless paused, throttled or backing off (the next admission
//     of its URLs starts it again).
//   - 5: a crawl's processing children are CrawlProcessingWorkflow (were ProcessPageWorkflow,
//     which now only processes the sweep's page lists). Hosts are unchanged.
//   - 6: a host run's first lease is a local activity in the workflow worker, for at most
//     HostConfig.LocalLease (a small host's whole run is then one workflow task); a lease
//     cancelled by a pause or throttle is always told through Postgres (revision 5's
//     "lease-told" change, folded in).
//
// Revisions 0 to 4 are retired; 5 is kept (workflows/host_fetch_rev5.go).
const WorkflowRevision = 6

// ErrLocalLeasesBusy is the error type of a local lease a workflow worker had no room for
// (TRAWLER_LOCAL_LEASE_CONCURRENCY): the host runs its lease on the fetch queue instead.
const ErrLocalLeasesBusy = "LocalLeasesBusy"

// HostInput starts (or continues) a host workflow.
type HostInput struct {
	Host   string     `json:"host"`
	Config HostConfig `json:"config"`
	State  HostState  `json:"state"`
	// Revision is the workflow code revision the run was started (or continued) by. Replay
	// of a run of a kept earlier revision dispatches on it (none is kept today); a run
	// started by hand with plain JSON (0) runs the live revision.
	Revision int `json:"revision,omitempty"`
}

// HostState is what a host workflow carries across Continue-As-New.
type HostState struct {
	Paused             bool      `json:"paused"`
	ThrottleDelay      Duration  `json:"throttleDelay,omitempty"`
	ThrottleConcurrent int       `json:"throttleConcurrency,omitempty"`
	CrawlDelay         Duration  `json:"crawlDelay,omitempty"`       // from robots.txt, capped
	CrawlDelayCapped   bool      `json:"crawlDelayCapped,omitempty"` // robots.txt asked for more than the cap
	LastRequestAt      time.Time `json:"lastRequestAt"`              // start of the last request sent
	NextRequestAt      time.Time `json:"nextRequestAt"`              // earliest next request start
	BackoffUntil       time.Time `json:"backoffUntil"`
	BackoffLevel       int       `json:"backoffLevel"`
	ConsecutiveErrors  int       `json:"consecutiveErrors"`
	Fetched            int64     `json:"fetched"`
	Errors             int64     `json:"errors"`
	Skipped            int64     `json:"skipped"`
	LastError          string    `json:"lastError,omitempty"`
	Runs               int       `json:"runs"` // Continue-As-New generations
}

// HostStatus answers the status query.
type HostStatus struct {
	Host          string    `json:"host"`
	State         HostPhase `json:"state"`
	Paused        bool      `json:"paused"`
	Delay         string    `json:"delay"`                // the delay in force
	CrawlDelay    string    `json:"crawlDelay,omitempty"` // robots.txt's, after the cap
	CrawlDelayCap bool      `json:"crawlDelayCapped,omitempty"`
	Throttle      string    `json:"throttle,omitempty"`
	Concurrency   int       `json:"concurrency"`
	InFlight      int       `json:"inFlight"`
	Fetched       int64     `json:"fetched"`
	Errors        int64     `json:"errors"`
	Skipped       int64     `json:"skipped"`
	LastError     string    `json:"lastError,omitempty"`
	NextWake      time.Time `json:"nextWake"`
	BackoffUntil  time.Time `json:"backoffUntil,omitempty"`
	BackoffLevel  int       `json:"backoffLevel"`
	HistoryEvents int       `json:"historyEvents"`
	Runs          int       `json:"runs"`
}

// URLsAdded is the urls-added signal: new URLs for the host from a crawl.
type URLsAdded struct {
	CrawlID string     `json:"crawlId,omitempty"`
	Config  HostConfig `json:"config"`
}

// Throttle is the throttle signal: a slower delay and/or fewer requests in flight. Zero fields
// are left as they are; Reset goes back to the crawl's pacing.
type Throttle struct {
	Delay       Duration `json:"delay,omitempty"`
	Concurrency int      `json:"concurrency,omitempty"`
	Reset       bool     `json:"reset,omitempty"`
}
