//go:build chaos

package e2e

import (
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/testweb"
)

// The full fault-injection run (`make chaos`): a crawl of about 5,000 test-web pages while a
// random worker is SIGKILLed every 20–30 s, the Temporal dev server and Postgres are each
// restarted once and MinIO is down for 60 s. Nothing may be lost or doubled, and politeness
// must hold throughout.
func TestChaosFull(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.Pages = 100, 50
	wc.DefaultDelay, wc.RetryAfter, wc.SlowRobots = 200*time.Millisecond, 2*time.Second, time.Second
	faults := killEvery(15*time.Second, 6*time.Minute, uint64(time.Now().UnixNano()))
	faults = append(faults,
		fault{After: 45 * time.Second, Name: "restart the Temporal dev server", Do: func(t *testing.T, c *chaosRun) { stackService(t, "restart", "temporal") }},
		fault{After: 90 * time.Second, Name: "restart Postgres", Do: func(t *testing.T, c *chaosRun) { stackService(t, "restart", "postgres") }},
		fault{After: 130 * time.Second, Name: "stop MinIO", Do: func(t *testing.T, c *chaosRun) { stackService(t, "stop", "minio") }},
		fault{After: 190 * time.Second, Name: "start MinIO (down 60 s)", Do: func(t *testing.T, c *chaosRun) { stackService(t, "start", "minio") }},
	)
	runChaos(t, wc, faults, 30*time.Minute)
}
