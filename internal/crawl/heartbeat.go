package crawl

import "time"

// HeartbeatEvery is how often a running activity (a processing run, a delivery) reports its
// progress, whatever it is doing (a slow response, a large page): the activities' heartbeat
// timeouts can then be short, and a dead worker's work moves on within them. The SDK
// throttles what reaches the server (TRAWLER_HEARTBEAT_MAX).
const HeartbeatEvery = 5 * time.Second

// LeaseBeatEvery is how often a fetch lease heartbeats. Each heartbeat that reaches the server
// is a write of the host workflow's state, and a big host's lease runs for minutes at a
// request a second or slower: a beat every 20 s is at most one for 20 pages. The fetch
// heartbeat timeout (workflows' fetchHeartbeatTimeout, 30 s) leaves 10 s for a slow beat.
const LeaseBeatEvery = 20 * time.Second

// LeaseHeartbeatGrace is how long a fetch lease runs before its first heartbeat: most leases of
// a real web's small hosts are over within it, and so cost none. Well within the fetch
// heartbeat timeout.
const LeaseHeartbeatGrace = 15 * time.Second
