package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/admit"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/failpoint"
	"github.com/trawlerdev/trawler/internal/store"
	"github.com/trawlerdev/trawler/internal/testenv"
	"github.com/trawlerdev/trawler/internal/testweb"
	"github.com/trawlerdev/trawler/internal/urlnorm"
)

// TestRecoveryAfterAllRolesDie kills the one worker process that serves every role while a
// lease holds claims of each kind at once: its first chunk, a top-up claimed before any
// heartbeat (a host's sitemap.xml is claimed by one), and the processing of the pages it
// fetched; then again as a retried lease's claim commits. What the dead process held must come
// back within the recovery bound, not after its claim TTL, and nothing may be lost.
func TestRecoveryAfterAllRolesDie(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.Pages, wc.Specials = 16, 10, false
	wc.DefaultDelay, wc.SlowRobots = 200*time.Millisecond, time.Second
	s := newStackWithoutWorkers(t, wc)
	bin := buildBinary(t, "trawler-worker", "./workers")
	w := superviseWorker(t, s, bin, "workflow,fetch,process")
	spec := crawl.Spec{Name: testenv.Unique("all"), Seeds: s.web.Seeds(), Scope: crawl.ScopeAny,
		Delay: crawl.Duration(wc.DefaultDelay), RequestTimeout: crawl.Duration(3 * time.Second), MaxAttempts: 3,
		RetryBase: crawl.Duration(500 * time.Millisecond), HostIdleTimeout: crawl.Duration(30 * time.Second),
		ProgressInterval: crawl.Duration(time.Second)}
	start := time.Now()
	run := s.start(spec)
	var deaths []string
	var lastDeath time.Time
	for _, point := range []string{failpoint.TopUpClaimed + "#1", failpoint.ClaimCommitted + "#3"} {
		if w.killAt(point, 30*time.Second, nil) {
			lastDeath = time.Now()
			deaths = append(deaths, fmt.Sprintf("%5.1fs at %s", time.Since(start).Seconds(), point))
		} else {
			deaths = append(deaths, fmt.Sprintf("%5.1fs at %s: not reached", time.Since(start).Seconds(), point))
		}
	}
	t.Logf("deaths:\n  %s", strings.Join(deaths, "\n  "))
	if lastDeath.IsZero() {
		t.Fatal("no failpoint was reached")
	}
	// Held (claimed or fetched) URLs, sampled until the crawl ends: none may be held longer than
	// the bound after the last death (a URL held by the first dead process may be held again
	// by the second).
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	var oldestHeld float64
	var held string
	ended := make(chan error, 1)
	var p crawl.CrawlProgress
	go func() { ended <- run.Get(ctx, &p) }()
	for done := false; !done; {
		var age float64
		var line string
		_ = s.store.Pool().QueryRow(ctx, `SELECT coalesce(max(extract(epoch FROM now() - greatest(updated_at, $1))), 0),
				coalesce(string_agg(format('%s %s by %s', url, state, coalesce(claimed_by, processing_by, '-')), '; '), '')
			FROM urls WHERE state IN ('claimed', 'fetched')`, lastDeath).Scan(&age, &line)
		if age > oldestHeld {
			oldestHeld, held = age, line
		}
		select {
		case err := <-ended:
			if err != nil {
				s.dumpPending()
				t.Fatalf("crawl did not finish: %v", err)
			}
			done = true
		case <-time.After(2 * time.Second):
		}
	}
	t.Logf("crawl ended %.1fs after the start, %.1fs after the last death; longest held %.0fs (%s)",
		time.Since(start).Seconds(), time.Since(lastDeath).Seconds(), oldestHeld, held)
	if p.State != crawl.CrawlDone || p.Pending != 0 {
		t.Fatalf("crawl ended %s with %d pending", p.State, p.Pending)
	}
	checkNothingLost(t, s, p, time.Since(start), len(deaths))
	if oldestHeld > recoveryBound.Seconds() {
		t.Errorf("a URL stayed claimed or fetched for %.0fs (bound %v): %s", oldestHeld, recoveryBound, held)
	}
}

// A claim held by a lease that will never come back (a host run that ended after its lease
// died: an independent crawl sat at "pending 1" for 17 minutes on a sitemap.xml claimed by such
// a top-up) is taken back by the host's next lease at once and, when no lease of the host comes
// by itself, by the crawl's sweep of stale hosts — never only after its claim TTL.
func TestDeadLeaseClaimIsTakenBack(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.Pages, wc.Specials = 2, 3, false
	wc.DefaultDelay = 200 * time.Millisecond
	s := newStack(t, wc)
	name := testenv.Unique("orphan")
	run := s.start(crawl.Spec{Name: name, Seeds: s.web.Seeds()[:1], Scope: crawl.ScopeHost, Delay: crawl.Duration(wc.DefaultDelay),
		ProgressInterval: crawl.Duration(time.Second)})
	ctx := context.Background()
	waitFor(t, time.Minute, func() bool {
		p, err := s.store.Crawls().CrawlProgress(ctx, name)
		return err == nil && p.Fetched > 0
	})
	// A URL of another host, claimed for an hour by a lease of a run that no longer exists.
	orphan := "http://" + s.web.HostName(1) + "/"
	host := s.web.HostName(1)
	if _, err := s.store.Frontier().Admit(ctx, name, []store.Candidate{{URL: orphan, Key: orphan, Hash: urlnorm.Hash(orphan), Host: host}}, admit.Budget(0), -1); err != nil {
		t.Fatal(err)
	}
	if tag, err := s.store.Pool().Exec(ctx, `UPDATE urls SET state = 'claimed', claimed_by = $2, claimed_until = now() + interval '1 hour'
		WHERE crawl_id = $1 AND url = $3`, name, crawl.ChunkOwner(crawl.LeaseOwner("dead-run", 0)), orphan); err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("orphan the claim: %v (%d rows)", err, tag.RowsAffected())
	}
	orphaned := time.Now()
	p := s.wait(run, 4*time.Minute)
	t.Logf("crawl ended %.0fs after the claim was orphaned", time.Since(orphaned).Seconds())
	if p.State != crawl.CrawlDone || p.Pending != 0 {
		t.Fatalf("crawl ended %s with %d pending", p.State, p.Pending)
	}
	var state string
	if err := s.store.Pool().QueryRow(ctx, `SELECT state FROM urls WHERE crawl_id = $1 AND url = $2`, name, orphan).Scan(&state); err != nil || state != "done" {
		t.Errorf("the orphaned URL ended %q (%v); want fetched and done", state, err)
	}
	checkNoPoliteness(t, s)
}
