// Package admit owns admission to a crawl's frontier: seed checks, URL submission, what a
// found URL becomes (Discover), admitting candidates under the crawl's budgets, and waking the
// hosts that got new URLs (Waker, paced by the Temporal backlog probe). It judges URLs by the
// crawl's compiled policy (package policy) and writes through the frontier's store aggregate.
// Activities wrap it; the HTTP API uses it directly.
package admit

import (
	"context"
	"fmt"

	"go.temporal.io/sdk/client"
	"golang.org/x/time/rate"

	"github.com/trawlerdev/trawler/internal/config"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/netguard"
	"github.com/trawlerdev/trawler/internal/policy"
	"github.com/trawlerdev/trawler/internal/seen"
	"github.com/trawlerdev/trawler/internal/store"
)

// Service is admission as a process runs it: its crawl cache and its admitter.
type Service struct {
	Crawls   *policy.Crawls
	Admitter *Admitter
}

// New assembles admission on a store for the workers and for other processes that admit URLs
// (the HTTP API). seen may be nil.
func New(c client.Client, cfg *config.Config, st *store.Store, filter *seen.Filter) *Service {
	crawls := &policy.Crawls{Store: st.Crawls(), Norm: cfg.Normalizer(), DefaultUserAgent: cfg.UserAgent, DefaultProxy: cfg.Proxy, Ports: cfg.AllowPorts,
		Guard: netguard.New(netguard.Options{ConnectTo: cfg.ConnectTo, Allow: cfg.AllowNetworks})}
	waker := &Waker{Client: c, TaskQueue: cfg.TaskQueue, FetchQueue: cfg.FetchTaskQueue, ProcessQueue: cfg.ProcessTaskQueue,
		IDPrefix: cfg.IDPrefix, LocalLease: crawl.Duration(cfg.LocalLease)}
	admitter := &Admitter{Store: st, Waker: waker, Seen: filter}
	if cfg.WakeRate > 0 {
		admitter.Wakes = rate.NewLimiter(rate.Limit(cfg.WakeRate), max(1, int(cfg.WakeRate)))
	}
	if cfg.WakeBacklog > 0 {
		admitter.Backlog = &Backlog{Client: c, Namespace: cfg.TemporalNamespace, TaskQueue: crawl.HostQueue(cfg.TaskQueue), MaxAge: cfg.WakeBacklog}
	}
	return &Service{Crawls: crawls, Admitter: admitter}
}

// SubmitResult is what became of URLs submitted to a crawl (the HTTP API's POST /urls).
type SubmitResult struct {
	Accepted   int               `json:"accepted"`   // new to the crawl, queued
	Duplicates int               `json:"duplicates"` // already known to the crawl
	Rejected   int               `json:"rejected"`   // invalid, out of scope, denied or over budget
	Reasons    []crawl.SeedError `json:"rejections,omitempty"`
}

// Submit admits URLs to a running crawl under its rules (scope, deny lists, budgets; unlike
// added seeds they do not widen the scope) and wakes their hosts.
func (s *Service) Submit(ctx context.Context, crawlID string, urls []string) (SubmitResult, error) {
	var out SubmitResult
	ci, err := s.Crawls.Get(ctx, crawlID)
	if err != nil {
		return out, err
	}
	var cands []store.Candidate
	for _, raw := range urls {
		c, why := given(s.Crawls, raw, crawl.SourceAPI)
		if why == "" {
			why = ci.Admissible(c)
		}
		if why != "" {
			out.Rejected++
			out.Reasons = append(out.Reasons, crawl.SeedError{Seed: raw, Reason: why})
			continue
		}
		cands = append(cands, c)
	}
	st, err := s.Admitter.AdmitSeeds(ctx, ci, cands)
	if err != nil {
		return out, err
	}
	out.Accepted, out.Duplicates, out.Rejected = st.New, st.Duplicates, out.Rejected+st.OverBudget
	if st.OverBudget > 0 {
		out.Reasons = append(out.Reasons, crawl.SeedError{Seed: fmt.Sprintf("%d URLs", st.OverBudget), Reason: "over the crawl's page budget"})
	}
	return out, nil
}

func errorf(format string, args ...any) error { return fmt.Errorf("admit: "+format, args...) }
