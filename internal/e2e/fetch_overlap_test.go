package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/trawlerdev/trawler/activities"
	"github.com/trawlerdev/trawler/internal/admit"
	"github.com/trawlerdev/trawler/internal/clock"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/fetch"
	"github.com/trawlerdev/trawler/internal/netguard"
	"github.com/trawlerdev/trawler/internal/policy"
	"github.com/trawlerdev/trawler/internal/store"
	"github.com/trawlerdev/trawler/internal/testweb"
	"github.com/trawlerdev/trawler/internal/urlnorm"
)

// leaseOf is a fetch lease of the fixture's host under owner that claims chunk URLs and ends
// after that one chunk (its time is up by then).
func leaseOf(owner string, chunk int, delay time.Duration) activities.FetchLeaseInput {
	return activities.FetchLeaseInput{Host: "h0000.test", Delay: delay, MaxCrawlDelay: 30 * time.Second,
		Chunk: chunk, ClaimTTL: time.Minute, Owner: owner, LeaseFor: time.Millisecond}
}

// Two fetch leases of one host running at once — a retry, and the stale attempt it replaced
// that has not noticed yet — still keep the host's spacing: the request slots are booked in
// Postgres, not in the worker.
func TestOverlappingFetchAttemptsKeepTheHostsDelay(t *testing.T) {
	s, fetcher := fetchFixture(t, 300*time.Millisecond)
	var wg sync.WaitGroup
	for _, owner := range []string{"lease-a", "lease-b"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var suite testsuite.WorkflowTestSuite
			env := suite.NewTestActivityEnvironment()
			env.RegisterActivity(fetcher)
			_, err := env.ExecuteActivity(fetcher.FetchBatch, leaseOf(owner, 3, 300*time.Millisecond))
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	h := s.web.Audit().Report().Host("h0000.test")
	if h == nil || h.Requests < 6 || h.GapViolations != 0 || h.PeakInFlight != 1 {
		t.Fatalf("two overlapping attempts broke the host's spacing: %+v", h)
	}
	t.Logf("%d requests from two concurrent attempts, min gap %.0f ms", h.Requests, h.MinGapMs)
}

// Two attempts of one lease — a retry, and the stale attempt it replaced still fetching —
// fetch each URL once: the retry takes back the claims of its owner, waits for the stale
// attempt's window of the host's time to end, and reads its URLs' states only then.
func TestOverlappingAttemptsFetchEachURLOnce(t *testing.T) {
	s, fetcher := fetchFixture(t, 300*time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fetcher.Control = s.store.WatchControl(ctx)
	for _, live := fetcher.Control.Epoch(); !live; _, live = fetcher.Control.Epoch() {
		time.Sleep(10 * time.Millisecond)
	}
	var wg sync.WaitGroup
	for attempt := 0; attempt < 2; attempt++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(attempt) * 700 * time.Millisecond) // the first holds a window by then
			var suite testsuite.WorkflowTestSuite
			env := suite.NewTestActivityEnvironment()
			env.RegisterActivity(fetcher)
			if _, err := env.ExecuteActivity(fetcher.FetchBatch, leaseOf("lease-1", 10, 300*time.Millisecond)); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	h := s.web.Audit().Report().Host("h0000.test")
	if h == nil || h.Requests < 7 || h.Repeats != 0 || h.GapViolations != 0 || h.PeakInFlight != 1 {
		t.Fatalf("two attempts of one lease: %+v", h)
	}
	t.Logf("%d requests from two attempts of one lease, min gap %.0f ms", h.Requests, h.MinGapMs)
}

// Fetch workers whose clocks run 2 s behind and 2 s ahead of the database's, taking turns at
// one host's leases, keep its delay as the server sees it: the host's bookings are kept on
// the database's clock, and each worker converts them with the offset it measured.
func TestSkewedWorkerClocksKeepTheHostsDelay(t *testing.T) {
	s, fetcher := fetchFixture(t, 300*time.Millisecond)
	var workers []*activities.Fetcher
	for _, skew := range []time.Duration{-2 * time.Second, 2 * time.Second} {
		w := *fetcher
		w.Store = store.NewOnClock(s.store.Pool(), clock.Clock{Skew: skew})
		workers = append(workers, &w)
	}
	for i := 0; i < 3; i++ {
		w := workers[i%2]
		var suite testsuite.WorkflowTestSuite
		env := suite.NewTestActivityEnvironment()
		env.RegisterActivity(w)
		if _, err := env.ExecuteActivity(w.FetchBatch, leaseOf(fmt.Sprintf("lease-%d", i), 2, 300*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
	}
	h := s.web.Audit().Report().Host("h0000.test")
	if h == nil || h.Requests < 6 || h.GapViolations != 0 || h.PeakInFlight != 1 {
		t.Fatalf("workers with skewed clocks broke the host's spacing: %+v", h)
	}
	t.Logf("%d requests from workers 2 s behind and 2 s ahead, min gap %.0f ms", h.Requests, h.MinGapMs)
}

// fetchFixture is a one-host test web with the given delay, six of its URLs queued, and a
// Fetcher on the stack's services.
func fetchFixture(t *testing.T, delay time.Duration) (*stack, *activities.Fetcher) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.Pages, wc.Specials = 1, 12, false
	wc.DefaultDelay = delay
	s := newStackWithoutWorkers(t, wc)
	ctx := context.Background()
	spec := crawl.Spec{Seeds: s.web.Seeds(), Scope: crawl.ScopeAny, Delay: crawl.Duration(delay)}.WithDefaults()
	if _, err := s.store.Crawls().CreateCrawl(ctx, "overlap", spec); err != nil {
		t.Fatal(err)
	}
	var cands []store.Candidate
	for _, p := range []string{"/", "/p/1.html", "/p/2.html", "/p/4.html", "/p/5.html", "/p/6.html"} {
		u := "http://h0000.test" + p
		cands = append(cands, store.Candidate{URL: u, Hash: urlnorm.Hash(u), Host: "h0000.test", Source: "link"})
	}
	if _, err := s.store.Frontier().Admit(ctx, "overlap", cands, admit.Budget(0), -1); err != nil {
		t.Fatal(err)
	}
	norm := urlnorm.New(urlnorm.Default())
	crawls := &policy.Crawls{Store: s.store.Crawls(), Norm: norm, DefaultUserAgent: s.cfg.UserAgent}
	fetcher := &activities.Fetcher{Store: s.store, Blob: s.blob, Crawls: crawls,
		Client:   fetch.New(fetch.Options{Dialer: netguard.New(netguard.Options{ConnectTo: s.cfg.ConnectTo})}),
		Admitter: &admit.Admitter{Store: s.store, Waker: &admit.Waker{Client: s.tc, TaskQueue: s.cfg.TaskQueue}}}
	return s, fetcher
}

// A delay of a millisecond — less than booking a slot takes — must not stall a batch on
// slots it keeps giving up as late.
func TestMillisecondDelayDoesNotStall(t *testing.T) {
	s, fetcher := fetchFixture(t, time.Millisecond)
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(fetcher)
	start := time.Now()
	v, err := env.ExecuteActivity(fetcher.FetchBatch, leaseOf("lease-1", 10, time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	var res activities.FetchLeaseResult
	if err := v.Get(&res); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	if res.Fetched != 6 || took > 20*time.Second || res.LateSlots > 3*res.Requests {
		t.Fatalf("lease of 6 at 1 ms: %+v in %v", res, took)
	}
	if h := s.web.Audit().Report().Host("h0000.test"); h == nil || h.PeakInFlight != 1 {
		t.Fatalf("audit: %+v", h)
	}
	t.Logf("6 pages in %v, %d slots given up as late", took.Round(time.Millisecond), res.LateSlots)
}
