package e2e

import (
	"context"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/trawlerdev/trawler/activities"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/fetch"
	"github.com/trawlerdev/trawler/internal/netguard"
	"github.com/trawlerdev/trawler/internal/store"
	"github.com/trawlerdev/trawler/internal/testweb"
	"github.com/trawlerdev/trawler/internal/urlnorm"
)

// Two attempts of fetch batches for one host running at once — a retry, and the stale attempt
// it replaced that has not noticed yet — still keep the host's spacing: the request slots are
// booked in Postgres, not in the worker.
func TestOverlappingFetchAttemptsKeepTheHostsDelay(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.Pages, wc.Specials = 1, 12, false
	wc.DefaultDelay = 300 * time.Millisecond
	s := newStackWithoutWorkers(t, wc)
	ctx := context.Background()
	spec := crawl.Spec{Seeds: s.web.Seeds(), Scope: crawl.ScopeAny, Delay: crawl.Duration(300 * time.Millisecond)}.WithDefaults()
	if err := s.store.CreateCrawl(ctx, "overlap", spec, 0, 0); err != nil {
		t.Fatal(err)
	}
	var cands []store.Candidate
	for _, p := range []string{"/", "/p/1.html", "/p/2.html", "/p/4.html", "/p/5.html", "/p/6.html"} {
		u := "http://h0000.test" + p
		cands = append(cands, store.Candidate{URL: u, Hash: urlnorm.Hash(u), Host: "h0000.test", Source: "link"})
	}
	if _, err := s.store.Admit(ctx, "overlap", cands); err != nil {
		t.Fatal(err)
	}
	claimed, _, err := s.store.Claim(ctx, "h0000.test", 10, time.Minute, time.Now())
	if err != nil || len(claimed) != 6 {
		t.Fatalf("claim: %d, %v", len(claimed), err)
	}
	norm := urlnorm.New(urlnorm.Default())
	crawls := &activities.Crawls{Store: s.store, Norm: norm, DefaultUserAgent: s.cfg.UserAgent}
	fetcher := &activities.Fetcher{Store: s.store, Blob: s.blob, Crawls: crawls,
		Client:   fetch.New(fetch.Options{Dialer: netguard.New(netguard.Options{ConnectTo: s.cfg.ConnectTo})}),
		Admitter: &activities.Admitter{Store: s.store, Waker: &activities.Waker{Client: s.tc, TaskQueue: s.cfg.TaskQueue}}}
	var wg sync.WaitGroup
	for _, half := range [][]store.Claimed{claimed[:3], claimed[3:]} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var suite testsuite.WorkflowTestSuite
			env := suite.NewTestActivityEnvironment()
			env.RegisterActivity(fetcher)
			_, err := env.ExecuteActivity(fetcher.FetchBatch, activities.FetchBatchInput{Host: "h0000.test", URLs: half,
				Delay: 300 * time.Millisecond, MaxCrawlDelay: 30 * time.Second})
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
