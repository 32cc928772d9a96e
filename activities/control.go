package activities

import (
	"context"
	"fmt"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/store"
)

// AddSeedsInput is a running crawl's add-seeds request.
type AddSeedsInput struct {
	CrawlID string         `json:"crawlId"`
	Seeds   crawl.AddSeeds `json:"seeds"`
}

// AddSeeds admits URLs to a running crawl as seeds (depth 0, seed priority) and wakes their
// hosts; invalid ones are reported, not fatal.
func (f *Frontier) AddSeeds(ctx context.Context, in AddSeedsInput) (crawl.ControlResult, error) {
	out := crawl.ControlResult{Signal: crawl.SignalAddSeeds}
	if err := f.Store.AddSeeds(ctx, in.CrawlID, in.Seeds.Seeds); err != nil { // the crawl's scope takes them in
		return out, err
	}
	f.Crawls.forget(in.CrawlID)
	ci, err := f.Crawls.get(ctx, in.CrawlID)
	if err != nil {
		return out, err
	}
	cands, invalid := f.seedCandidates(ci, in.Seeds.Seeds)
	for _, bad := range invalid {
		out.Error += bad.Seed + ": " + bad.Reason + "; "
	}
	st, err := f.Admitter.admitSeeds(ctx, ci, cands)
	if err != nil {
		return out, err
	}
	out.Count = int64(st.New)
	return out, nil
}

// ReplayInput is a crawl's replay-dead-letters request.
type ReplayInput struct {
	CrawlID string       `json:"crawlId"`
	Replay  crawl.Replay `json:"replay"`
}

// ReplayDeadLetters queues the matching dead URLs again and wakes their hosts.
func (f *Frontier) ReplayDeadLetters(ctx context.Context, in ReplayInput) (crawl.ControlResult, error) {
	out := crawl.ControlResult{Signal: crawl.SignalReplay}
	hosts, err := f.Store.ReplayDeadLetters(ctx, in.CrawlID, store.DeadLetterFilter{Host: in.Replay.Host, Reason: in.Replay.Reason})
	if err != nil || len(hosts) == 0 {
		return out, err
	}
	ci, err := f.Crawls.get(ctx, in.CrawlID)
	if err != nil {
		return out, err
	}
	names := make([]string, 0, len(hosts))
	for h, n := range hosts {
		names = append(names, h)
		out.Count += int64(n)
	}
	out.Hosts = hosts
	return out, f.Admitter.Waker.Wake(ctx, in.CrawlID, crawl.HostConfigFrom(ci.spec), names)
}

// BlockInput is a crawl's block request.
type BlockInput struct {
	CrawlID string      `json:"crawlId"`
	Block   crawl.Block `json:"block"`
}

// Block adds hosts and patterns to the crawl's deny lists and skips its queued URLs they match.
func (f *Frontier) Block(ctx context.Context, in BlockInput) (crawl.ControlResult, error) {
	out := crawl.ControlResult{Signal: crawl.SignalBlock}
	if err := in.Block.Validate(); err != nil {
		out.Error = err.Error()
		return out, nil
	}
	n, err := f.Store.Block(ctx, in.CrawlID, in.Block.Hosts, in.Block.Patterns)
	out.Count = n
	f.Crawls.forget(in.CrawlID)
	return out, err
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
func (f *Frontier) Submit(ctx context.Context, crawlID string, urls []string) (SubmitResult, error) {
	var out SubmitResult
	ci, err := f.Crawls.get(ctx, crawlID)
	if err != nil {
		return out, err
	}
	var cands []store.Candidate
	for _, raw := range urls {
		why := crawl.CheckSeed(raw)
		var c store.Candidate
		if why == "" {
			n, err := f.Crawls.Norm.NormalizeRequest(raw)
			if err != nil {
				why = err.Error()
			} else {
				c = f.Crawls.candidate(n, 0, 0, crawl.SourceAPI)
				why = ci.admissible(c)
			}
		}
		if why != "" {
			out.Rejected++
			out.Reasons = append(out.Reasons, crawl.SeedError{Seed: raw, Reason: why})
			continue
		}
		cands = append(cands, c)
	}
	st, err := f.Admitter.admitSeeds(ctx, ci, cands)
	if err != nil {
		return out, err
	}
	out.Accepted, out.Duplicates, out.Rejected = st.New, st.Duplicates, out.Rejected+st.OverBudget
	if st.OverBudget > 0 {
		out.Reasons = append(out.Reasons, crawl.SeedError{Seed: fmt.Sprintf("%d URLs", st.OverBudget), Reason: "over the crawl's page budget"})
	}
	return out, nil
}

// crawl.SourceAPI marks URLs submitted through the HTTP API.
