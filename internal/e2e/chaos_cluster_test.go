//go:build cluster

package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/testweb"
)

// The cluster run (`make cluster-chaos`, on scripts/cluster.sh): a 10,000-page crawl by
// workers given the cluster's lists (Temporal frontends, MinIO nodes, a Postgres DSN naming
// primary and standby) while a Temporal node is SIGKILLed and back after 60 s, a MinIO node
// is down for 60 s, a worker of each role is SIGKILLed, and the Postgres primary is stopped
// and its standby promoted. Nothing may be lost or doubled, politeness must hold, and every
// fault must land while the crawl runs.
func TestClusterChaos(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.Pages = 117, 100 // about 10,000 pages the crawl must store (the rest are traps, disallowed, dead)
	// 1.5 s a page a host: the crawl takes at least 130 s, so every fault below lands in it, after
	// the first 30 s in which the crawl reaches its pace (a rate to measure recovery against).
	wc.DefaultDelay, wc.RetryAfter, wc.SlowRobots = 1500*time.Millisecond, 2*time.Second, time.Second
	cluster := func(args ...string) func(t *testing.T, c *chaosRun) {
		return func(t *testing.T, c *chaosRun) {
			out := script(t, "scripts/cluster.sh", args...)
			c.log[len(c.log)-1] += " — " + out[strings.LastIndexByte(out, '\n')+1:] // what it did, and in how long
		}
	}
	kill := func(role string) func(t *testing.T, c *chaosRun) {
		return func(t *testing.T, c *chaosRun) { c.kill(t, role) }
	}
	faults := []fault{
		{After: 30 * time.Second, Name: "SIGKILL Temporal node 2", Do: cluster("kill", "temporal", "2")},
		{After: 40 * time.Second, Name: "stop MinIO node 3", Do: cluster("stop", "minio", "3")},
		{After: 50 * time.Second, Name: "SIGKILL fetch1 worker", Do: kill("fetch1")},
		{After: 60 * time.Second, Name: "SIGKILL process worker", Do: kill("process")},
		{After: 70 * time.Second, Name: "SIGKILL workflow worker", Do: kill("workflow")},
		{After: 90 * time.Second, Name: "start Temporal node 2 (down 60 s)", Do: cluster("start", "temporal", "2")},
		{After: 100 * time.Second, Name: "start MinIO node 3 (down 60 s)", Do: cluster("start", "minio", "3")},
		{After: 115 * time.Second, Name: "stop the Postgres primary, promote the standby", Do: cluster("failover")},
	}
	c := runChaos(t, wc, faults, 20*time.Minute)
	if len(c.log) != len(faults) {
		t.Errorf("the crawl ended after %d of %d faults: the rest were never tested", len(c.log), len(faults))
	}
}
