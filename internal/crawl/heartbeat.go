package crawl

import "time"

// HeartbeatEvery is how often a running activity (a fetch lease, a processing run) reports
// its progress, whatever it is doing (waiting for a slot, a slow response, a large page): the
// activities' heartbeat timeouts can then be short, and a dead worker's work moves on within
// them. The SDK throttles what reaches the server (TRAWLER_HEARTBEAT_MAX).
const HeartbeatEvery = 5 * time.Second

// LeaseHeartbeatGrace is how long a fetch lease runs before it heartbeats its progress: most
// leases of a real web's small hosts are over within it, and so cost no heartbeat. Well within
// the fetch heartbeat timeout, and below HeartbeatEvery.
const LeaseHeartbeatGrace = 3 * time.Second
