// Package failpoint kills the process at named points of the crawl's data path, for the
// liveness tests: a worker SIGKILLed right after a claim commits, after a fetch is recorded,
// after links are admitted and before their hosts are woken… is how a real crash looks at its
// worst moment, and a random kill rarely lands there.
//
// Points are armed by the environment of a worker process: TRAWLER_FAILPOINTS=NAME[#N],…
// kills the process (SIGKILL, no clean-up) at the Nth time NAME is reached (the first when #N
// is left out). Unarmed, Hit is one atomic load.
package failpoint

import (
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
)

// EnvVar arms failpoints in a worker process.
const EnvVar = "TRAWLER_FAILPOINTS"

// The points the data path declares.
const (
	ClaimCommitted   = "claim-committed"   // a host's claim is in Postgres, the workflow has not recorded it
	ProgressRead     = "progress-read"     // a crawl's progress is read, its workflow task not yet complete
	TopUpClaimed     = "topup-claimed"     // a fetch lease claimed its next chunk (held in Postgres only)
	FetchRecorded    = "fetch-recorded"    // a page's fetch is recorded, the batch has not heartbeated it
	BatchFetched     = "batch-fetched"     // a fetch batch is done, its result not yet reported
	ProcessStarted   = "process-started"   // a processing batch began
	DocumentSaved    = "document-saved"    // a processed page's document is saved, its links not yet admitted
	LinksAdmitted    = "links-admitted"    // links are in the frontier, their hosts not yet woken
	ProcessFinishing = "process-finishing" // a processing batch is done, its result not yet reported
	RedirectAdmitted = "redirect-admitted" // a redirect's target is admitted, its outcome not yet recorded
	RenderClaimed    = "render-claimed"    // a render run claimed pages to render, none rendered yet
)

var (
	armed atomic.Bool
	mu    sync.Mutex
	at    map[string]int // point -> the hit that kills
	hits  map[string]int
	kill  = func() { _ = syscall.Kill(os.Getpid(), syscall.SIGKILL) }
)

func init() {
	spec := os.Getenv(EnvVar)
	if err := Arm(spec); err != nil {
		slog.Error("ignoring "+EnvVar, "error", err)
	} else if spec != "" {
		slog.Warn("failpoints armed: this process kills itself at them", "points", spec)
	}
}

// Arm sets the points from a spec such as "fetch-recorded#3,links-admitted" (empty: none).
func Arm(spec string) error {
	m := map[string]int{}
	for _, p := range strings.Split(spec, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		name, nth, found := strings.Cut(p, "#")
		n := 1
		if found {
			v, err := strconv.Atoi(nth)
			if err != nil || v < 1 {
				return fmt.Errorf("failpoint %q: the count after # must be a positive number", p)
			}
			n = v
		}
		m[name] = n
	}
	mu.Lock()
	at, hits = m, map[string]int{}
	mu.Unlock()
	armed.Store(len(m) > 0)
	return nil
}

// Hit marks that the process reached the point; an armed point kills it on its Nth hit.
func Hit(point string) {
	if !armed.Load() {
		return
	}
	mu.Lock()
	n, ok := at[point]
	if ok {
		hits[point]++
		ok = hits[point] == n
	}
	mu.Unlock()
	if ok {
		slog.Warn("failpoint reached: killing the process", "point", point)
		kill()
	}
}
