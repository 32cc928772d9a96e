// Package admit owns admission to a crawl's frontier: the crawl cache (each crawl's rules as
// a worker holds them), candidates and their priority, what may be admitted and why not, seed
// checks, URL submission, and waking the hosts that got new URLs. Activities wrap it; the
// HTTP API uses it directly.
package admit

import (
	"context"
	"fmt"

	"go.temporal.io/sdk/client"
	"golang.org/x/time/rate"

	"github.com/trawlerdev/trawler/internal/config"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/netguard"
	"github.com/trawlerdev/trawler/internal/seen"
	"github.com/trawlerdev/trawler/internal/store"
)

// Service is admission as a process runs it: its crawl cache and its admitter.
type Service struct {
	Crawls   *Crawls
	Admitter *Admitter
}

// New assembles admission on a store for the workers and for other processes that admit URLs
// (the HTTP API). seen may be nil.
func New(c client.Client, cfg *config.Config, st *store.Store, filter *seen.Filter) *Service {
	crawls := &Crawls{Store: st.Crawls(), Norm: cfg.Normalizer(), DefaultUserAgent: cfg.UserAgent, DefaultProxy: cfg.Proxy, Ports: cfg.AllowPorts,
		Guard: netguard.New(netguard.Options{ConnectTo: cfg.ConnectTo, Allow: cfg.AllowNetworks})}
	waker := &Waker{Client: c, TaskQueue: cfg.TaskQueue, FetchQueue: cfg.FetchTaskQueue, ProcessQueue: cfg.ProcessTaskQueue,
		IDPrefix: cfg.IDPrefix}
	admitter := &Admitter{Store: st, Waker: waker, Seen: filter}
	if cfg.WakeRate > 0 {
		admitter.Wakes = rate.NewLimiter(rate.Limit(cfg.WakeRate), max(1, int(cfg.WakeRate)))
	}
	if cfg.WakeBacklog > 0 {
		admitter.Backlog = &Backlog{Client: c, Namespace: cfg.TemporalNamespace, TaskQueue: cfg.TaskQueue, MaxAge: cfg.WakeBacklog}
	}
	return &Service{Crawls: crawls, Admitter: admitter}
}

// given checks a URL given by hand (a seed, a submitted URL) and builds its candidate; why
// says what is wrong with it as a URL ("" if nothing). The crawl's rules are the caller's to
// apply.
func (c *Crawls) given(raw string, source crawl.Source) (cand store.Candidate, why string) {
	if why := crawl.CheckSeed(raw); why != "" {
		return cand, why
	}
	n, err := c.Norm.NormalizeRequest(raw)
	if err != nil {
		return cand, err.Error()
	}
	return c.Candidate(n, 0, 0, source), ""
}

// SeedCandidates checks and normalizes seed URLs; the refused ones come back with reasons.
func (c *Crawls) SeedCandidates(ci *Crawl, seeds []string) ([]store.Candidate, []crawl.SeedError) {
	var cands []store.Candidate
	var invalid []crawl.SeedError
	for _, s := range seeds {
		cand, why := c.given(s, crawl.SourceSeed)
		if why == "" {
			if w := ci.Admissible(cand); w == RejectDenied || w == RejectScope || w == RejectPort { // trap rules do not judge seeds
				why = w
			}
		}
		if why != "" {
			invalid = append(invalid, crawl.SeedError{Seed: s, Reason: why})
			continue
		}
		cands = append(cands, cand)
	}
	return cands, invalid
}

// CheckSeeds is SeedCandidates for a crawl not started yet (the CLI's check before it starts
// one): the seeds of spec (with its defaults) that its start would admit, and why the others
// would be refused.
func (c *Crawls) CheckSeeds(spec crawl.Spec) (good []string, invalid []crawl.SeedError) {
	_, invalid = c.SeedCandidates(c.build(spec.Name, spec), spec.Seeds)
	bad := map[string]bool{}
	for _, e := range invalid {
		bad[e.Seed] = true
	}
	for _, s := range spec.Seeds {
		if !bad[s] {
			good = append(good, s)
		}
	}
	return good, invalid
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
		c, why := s.Crawls.given(raw, crawl.SourceAPI)
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
