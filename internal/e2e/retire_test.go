package e2e

import (
	"context"
	"net"
	"net/netip"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/trawlerdev/trawler/activities"
	"github.com/trawlerdev/trawler/internal/admit"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/fetch"
	"github.com/trawlerdev/trawler/internal/netguard"
	"github.com/trawlerdev/trawler/internal/policy"
	"github.com/trawlerdev/trawler/internal/store"
	"github.com/trawlerdev/trawler/internal/testweb"
	"github.com/trawlerdev/trawler/internal/urlnorm"
)

// A host whose name no longer resolves starts the dead-site clock; once retired, its pending
// URLs are skipped with the reason and new ones are recorded as skipped, never silently dropped.
func TestDeadHostIsRetired(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.Specials = 1, false
	s := newStackWithoutWorkers(t, wc)
	ctx := context.Background()
	spec := crawl.Spec{Seeds: []string{"http://gone.example/"}, Scope: crawl.ScopeAny, RetireAfter: crawl.Duration(time.Millisecond)}.WithDefaults()
	if _, err := s.store.Crawls().CreateCrawl(ctx, "dead", spec); err != nil {
		t.Fatal(err)
	}
	var cands []store.Candidate
	for _, u := range []string{"http://gone.example/", "http://gone.example/a", "http://gone.example/b"} {
		cands = append(cands, store.Candidate{URL: u, Hash: urlnorm.Hash(u), Host: "gone.example", Source: "link"})
	}
	if _, err := s.store.Frontier().Admit(ctx, "dead", cands, admit.Budget(0), -1); err != nil {
		t.Fatal(err)
	}
	// No real DNS traffic: a resolver that knows no name.
	nx := netguard.NewResolver(func(_ context.Context, host string) ([]netip.Addr, error) {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}, time.Minute, time.Minute)
	fetcher := &activities.Fetcher{Store: s.store, Blob: s.blob,
		Crawls: &policy.Crawls{Store: s.store.Crawls(), Norm: urlnorm.New(urlnorm.Default()), DefaultUserAgent: s.cfg.UserAgent},
		Client: fetch.New(fetch.Options{Dialer: netguard.New(netguard.Options{Resolver: nx})})}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(fetcher)
	if _, err := env.ExecuteActivity(fetcher.FetchBatch, activities.FetchLeaseInput{Host: "gone.example", Chunk: 1,
		ClaimTTL: time.Minute, Owner: "lease-1", LeaseFor: time.Millisecond, Delay: 10 * time.Millisecond, MaxCrawlDelay: time.Second}); err != nil {
		t.Fatal(err)
	}
	var reason string
	if err := s.store.Pool().QueryRow(ctx, `SELECT coalesce(failing_reason, '') FROM hosts WHERE host = 'gone.example'`).Scan(&reason); err != nil || reason != "dns" {
		t.Fatalf("failing reason %q, %v", reason, err)
	}
	time.Sleep(5 * time.Millisecond)
	if retired, err := s.store.Hosts().RetireIfDead(ctx, "gone.example", time.Millisecond); err != nil || !retired {
		t.Fatalf("retired %v, %v", retired, err)
	}
	late := "http://gone.example/late"
	if _, err := s.store.Frontier().Admit(ctx, "dead", []store.Candidate{{URL: late, Hash: urlnorm.Hash(late), Host: "gone.example", Source: "link"}}, admit.Budget(0), -1); err != nil {
		t.Fatal(err)
	}
	p, err := s.store.Crawls().CrawlProgress(ctx, "dead")
	if err != nil {
		t.Fatal(err)
	}
	if p.Pending != 0 || p.Skipped["host retired: dns"] != 4 {
		t.Fatalf("after retirement: %+v", p)
	}
}
