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
	crawls := &Crawls{Store: st, Norm: cfg.Normalizer(), DefaultUserAgent: cfg.UserAgent, Ports: cfg.AllowPorts}
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

// SeedCandidates checks and normalizes seed URLs; the refused ones come back with reasons.
func (c *Crawls) SeedCandidates(ci *Crawl, seeds []string) ([]store.Candidate, []crawl.SeedError) {
	var cands []store.Candidate
	var invalid []crawl.SeedError
	for _, s := range seeds {
		if why := crawl.CheckSeed(s); why != "" {
			invalid = append(invalid, crawl.SeedError{Seed: s, Reason: why})
			continue
		}
		n, err := c.Norm.NormalizeRequest(s)
		if err != nil {
			invalid = append(invalid, crawl.SeedError{Seed: s, Reason: err.Error()})
			continue
		}
		cand := c.Candidate(n, 0, 0, crawl.SourceSeed)
		if why := ci.Admissible(cand); why == RejectDenied || why == RejectScope || why == RejectPort { // trap rules do not judge seeds
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
		why := crawl.CheckSeed(raw)
		var c store.Candidate
		if why == "" {
			n, err := s.Crawls.Norm.NormalizeRequest(raw)
			if err != nil {
				why = err.Error()
			} else {
				c = s.Crawls.Candidate(n, 0, 0, crawl.SourceAPI)
				why = ci.Admissible(c)
			}
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
