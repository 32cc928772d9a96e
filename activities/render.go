package activities

import (
	"context"

	"go.temporal.io/sdk/activity"

	"github.com/trawlerdev/trawler/internal/admit"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/fetch"
	"github.com/trawlerdev/trawler/internal/pacing"
	"github.com/trawlerdev/trawler/internal/policy"
	"github.com/trawlerdev/trawler/internal/render"
	"github.com/trawlerdev/trawler/internal/rendering"
	"github.com/trawlerdev/trawler/internal/segment"
	"github.com/trawlerdev/trawler/internal/store"
)

// RenderInput and RenderResult are a render run's input and result, as histories hold them.
type (
	RenderInput  = rendering.Run
	RenderResult = rendering.Result
)

// Renderer runs on the render task queue: the render stage (internal/rendering) with
// Temporal's heartbeats and logger.
type Renderer struct {
	Store    *store.Store
	Bodies   *segment.Reader // the captures
	DOMs     *segment.Writer // where rendered DOMs go
	Crawls   *policy.Crawls
	Admitter *admit.Admitter
	Browser  *render.Browser
	Client   *fetch.Client    // for the pages' own subresources
	Schedule *pacing.Schedule // books those requests on their host's schedule (nil: no per-IP limit)
	Stopping <-chan struct{}
}

// RenderPages is a crawl's render run: it renders the crawl's queued pages until in.For has
// passed or none came for a while.
func (r *Renderer) RenderPages(ctx context.Context, in RenderInput) (RenderResult, error) {
	// Each attempt claims as its own owner: a crawl runs one render run at a time, so claims
	// of any other owner (a dead attempt, an earlier run) are taken back at once, and a stale
	// attempt's late results no longer match its claims.
	in.Owner = crawl.RenderAttemptOwner(in.Owner, activity.GetInfo(ctx).Attempt)
	s := &rendering.Stage{Store: r.Store.Renders(), Hosts: r.Store.Hosts(), Clock: r.Store.Clock(), Browser: r.Browser, Crawls: r.Crawls, Admit: admitDiscovered(ctx, r.Admitter),
		Body: r.Bodies.Get, StoreDOM: func(_ context.Context, crawlID string, dom []byte) (string, func(context.Context) error, error) {
			return r.DOMs.Add(crawlID, dom)
		},
		Client: r.Client, Schedule: scheduleOf(r.Schedule, r.Store), Stopping: r.Stopping,
		Hooks: rendering.Hooks{Beat: func(res RenderResult) { activity.RecordHeartbeat(ctx, res) }, Log: activity.GetLogger(ctx)}}
	return s.Render(ctx, in)
}
