package frontier

import (
	"context"
	"fmt"

	"go.temporal.io/sdk/temporal"

	"github.com/trawlerdev/trawler/internal/admit"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/failpoint"
	"github.com/trawlerdev/trawler/internal/metrics"
)

// StartCrawlInput creates a crawl and admits its seeds.
type StartCrawlInput struct {
	CrawlID string     `json:"crawlId"`
	Spec    crawl.Spec `json:"spec"`
	// Unknown are the fields the crawl's spec named that Trawler does not know: the crawl is
	// refused (crawl.CheckFields) before anything is recorded.
	Unknown []crawl.UnknownField `json:"unknownFields,omitempty"`
}

// StartCrawlResult says what became of the seeds.
type StartCrawlResult struct {
	Admitted int               `json:"admitted"`
	Hosts    int               `json:"hosts"`
	Invalid  []crawl.SeedError `json:"invalid,omitempty"`
	// ProcessQueue is where the crawl's processing and archiving activities run.
	ProcessQueue string `json:"processQueue,omitempty"`
	// RenderQueue is where its render runs go (spec.render).
	RenderQueue string `json:"renderQueue,omitempty"`
}

// StartCrawl records the crawl (keeping an existing record) and admits the valid seeds; the
// invalid ones come back with their reasons.
func (f *Frontier) StartCrawl(ctx context.Context, in StartCrawlInput) (StartCrawlResult, error) {
	out := StartCrawlResult{ProcessQueue: f.ProcessQueue, RenderQueue: f.RenderQueue}
	// Every way in (trawler crawl, the API, temporal workflow start with or without a name)
	// comes through here: the ID names object prefixes that must not hold one another.
	if err := crawl.CheckID(in.CrawlID); err != nil {
		return out, temporal.NewNonRetryableApplicationError("invalid crawl spec: "+err.Error(), "InvalidSpec", err)
	}
	if err := crawl.CheckFields(in.Unknown); err != nil {
		return out, temporal.NewNonRetryableApplicationError("invalid crawl spec: "+err.Error(), "InvalidSpec", err)
	}
	// A proxy the workers could never dial fails the crawl now, with the reason, instead of
	// deferring its hosts for ever (here, not in the workflow: the check resolves names).
	if err := f.Crawls.CheckProxy(ctx, in.Spec); err != nil {
		return out, temporal.NewNonRetryableApplicationError("invalid crawl spec: "+err.Error(), "InvalidSpec", err)
	}
	// A crawl to deduplicate against must exist: a typo would quietly store everything again.
	for _, other := range in.Spec.DedupAgainst {
		if other == "*" || other == in.CrawlID {
			continue
		}
		exists, _, err := f.Store.CrawlLive(ctx, other)
		if err != nil {
			return out, err
		}
		if !exists {
			err := fmt.Errorf("dedupAgainst: no crawl %q", other)
			return out, temporal.NewNonRetryableApplicationError("invalid crawl spec: "+err.Error(), "InvalidSpec", err)
		}
	}
	// Extraction rules compile here, once, at the start: not in the workflow's check, which
	// a replay runs again (a library that came to read a selector otherwise must not fail it).
	if err := crawl.CheckExtract(in.Spec.Extract); err != nil {
		return out, temporal.NewNonRetryableApplicationError("invalid crawl spec: "+err.Error(), "InvalidSpec", err)
	}
	// The workflow applied the spec's defaults and checked it; the crawl is built from the
	// record the creation returns, not read back.
	spec, err := f.Store.CreateCrawl(ctx, in.CrawlID, in.Spec)
	if err != nil {
		return out, err
	}
	ci := f.Crawls.Put(in.CrawlID, spec)
	cands, invalid := admit.SeedCandidates(f.Crawls, ci, in.Spec.Seeds)
	out.Invalid = invalid
	st, err := f.AdmitSeeds(ctx, ci, cands)
	if err != nil {
		return out, err
	}
	out.Admitted, out.Hosts = st.New, st.Hosts
	return out, nil
}

// Progress reads a crawl's progress, and sets the frontier's gauges from it.
func (f *Frontier) Progress(ctx context.Context, crawlID string) (crawl.CrawlProgress, error) {
	p, err := f.Store.CrawlProgress(ctx, crawlID)
	if err != nil {
		return crawl.CrawlProgress{}, err
	}
	failpoint.Hit(failpoint.ProgressRead)
	for _, state := range []crawl.URLState{crawl.URLQueued, crawl.URLClaimed, crawl.URLFetched} {
		f.gauge(metrics.FrontierURLs, float64(p.ByState[state]), map[string]string{"crawl": crawlID, "state": string(state)})
	}
	tags := map[string]string{"crawl": crawlID}
	f.gauge(metrics.ExpiredClaims, float64(p.Waiting.ExpiredClaims), tags)
	f.gauge(metrics.OldestUnprocessed, p.Waiting.OldestFetchS, tags)
	f.gauge(metrics.OldestDue, p.Waiting.OldestDueS, tags)
	p.UpdatedAt, p.PagesPerSec = f.now(), p.AvgPagesPerSec()
	return p, nil
}

// SetCrawlState moves a crawl to running, paused, stopped or done.
func (f *Frontier) SetCrawlState(ctx context.Context, crawlID string, state crawl.CrawlState) error {
	return f.Store.SetCrawlState(ctx, crawlID, state)
}
