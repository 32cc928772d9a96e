package rendering

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/trawlerdev/trawler/internal/admit"
	"github.com/trawlerdev/trawler/internal/clock"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/failpoint"
	"github.com/trawlerdev/trawler/internal/parse"
	"github.com/trawlerdev/trawler/internal/render"
	"github.com/trawlerdev/trawler/internal/robots"
	"github.com/trawlerdev/trawler/internal/store"
)

// maxBrowserRestarts is how often the browser may die in one render run before the run fails
// (the worker, not the pages, is then what is broken).
const maxBrowserRestarts = 3

// renderIdle is how long a render run waits for work before it ends.
const renderIdle = 10 * time.Second

// renderBeat is how often a render run heartbeats while pages render: a page may take its
// whole timeout, and the run's heartbeat timeout (the crawl workflow's) is what finds a dead
// worker, so it must be short and the beats steady.
const renderBeat = 5 * time.Second

// Render renders the crawl's queued pages until in.For has passed or none came for
// renderIdle.
func (r *Stage) Render(ctx context.Context, in Run) (Result, error) {
	var res Result
	var mu sync.Mutex
	defer clock.Every(ctx, renderBeat, func() {
		mu.Lock()
		now := res
		mu.Unlock()
		r.Hooks.beat(now)
	})()
	deadline := time.Now().Add(in.For)
	idleSince := time.Now()
	for time.Now().Before(deadline) && time.Since(idleSince) < renderIdle {
		select {
		case <-r.Stopping:
			return res, nil // the crawl starts another run on a live worker
		case <-ctx.Done():
			return res, ctx.Err()
		default:
		}
		jobs, err := r.Store.ClaimRenders(ctx, in.CrawlID, in.Owner, max(r.Browser.Concurrency(), 1), 3*time.Minute)
		if err != nil {
			return res, err
		}
		if len(jobs) == 0 {
			if err := clock.SleepUntil(ctx, clock.Clock{}, time.Now().Add(time.Second)); err != nil {
				return res, err
			}
			r.Hooks.beat(res)
			continue
		}
		failpoint.Hit(failpoint.RenderClaimed)
		idleSince = time.Now()
		var wg sync.WaitGroup
		errs := make(chan error, len(jobs))
		gone := 0
		for _, j := range jobs {
			wg.Go(func() {
				n, err := r.renderOne(ctx, j, in.Owner)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case errors.Is(err, render.ErrBrowserGone):
					// Ours, not the page's: its claim goes back uncounted, and the next page
					// starts a new browser.
					if rerr := r.Store.ReleaseRender(context.WithoutCancel(ctx), j, in.Owner); rerr != nil {
						errs <- errors.Join(err, rerr)
					}
					gone++
				case err != nil:
					errs <- err
				case n < 0:
					res.Failed++
				default:
					res.Rendered++
					res.Admitted += n
				}
			})
		}
		wg.Wait()
		close(errs)
		if err := <-errs; err != nil {
			return res, err
		}
		if gone > 0 {
			mu.Lock() // (the heartbeat reads it)
			res.BrowserRestarts++
			mu.Unlock()
			if res.BrowserRestarts > maxBrowserRestarts {
				return res, fmt.Errorf("render: the browser died %d times in one render run", res.BrowserRestarts)
			}
			r.Hooks.log().Warn("the browser died: pages given back, starting another", "pages", gone)
		}
		r.Hooks.beat(res)
	}
	return res, nil
}

// renderOne renders one page and admits its links: the number admitted, or -1 when the page
// could not be rendered (recorded, tried again later up to a limit). An error is ours.
func (r *Stage) renderOne(ctx context.Context, j store.RenderJob, owner string) (int, error) {
	log := r.Hooks.log()
	ci, err := r.Crawls.Get(ctx, j.CrawlID)
	if err != nil {
		return 0, err
	}
	spec := ci.Spec
	pu, err := url.Parse(j.URL)
	if err != nil {
		return -1, r.Store.FinishRender(ctx, j, owner, store.RenderOutcome{Err: "unparseable page URL"})
	}
	body, err := r.Body(ctx, j.BodyKey, spec.MaxBodyBytes+1)
	if err != nil {
		return 0, err
	}
	policy, err := r.newPagePolicy(ctx, ci, j, pu, body)
	if err != nil {
		return 0, err
	}
	out, err := r.Browser.Render(ctx, j.URL, policy.answer) // (no policy call outlives Render)
	if err != nil {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		if errors.Is(err, render.ErrBrowserGone) {
			return 0, err
		}
		log.Warn("render failed", "url", j.URL, "error", err)
		return -1, r.Store.FinishRender(ctx, j, owner, store.RenderOutcome{Err: err.Error()})
	}
	o := store.RenderOutcome{DOMBytes: len(out.DOM), Requests: out.Requests}
	for _, n := range out.Blocked {
		o.Blocked += n
	}
	key, stored, err := r.StoreDOM(ctx, j.CrawlID, []byte(out.DOM))
	if err != nil {
		return 0, err
	}
	o.DOMKey = key
	// What the browser loaded through us goes to the archive beside the DOM (no policy call
	// outlives Render, so the records are complete).
	var loadsStored func(context.Context) error
	if policy.loads.recs.Len() > 0 {
		if o.LoadsKey, loadsStored, err = r.StoreDOM(ctx, j.CrawlID, policy.loads.recs.Bytes()); err != nil {
			return 0, err
		}
		o.Loads = policy.loads.index
	}
	parsed, err := parse.Parse([]byte(out.DOM), "text/html; charset=utf-8", pu, spec.MaxOutlinks*4, 0, ci.Token)
	admitted := 0
	if err == nil && !parsed.Binary && !parsed.Meta.NoFollow && !robots.ParseList(j.RobotsTag).NoFollow {
		found := admit.Discover(r.Crawls, ci, parsed.Base, admit.From{Depth: j.Depth + 1, Source: crawl.SourceLink}, spec.MaxOutlinks)
		for _, l := range parsed.Links {
			found.Add(admit.Found{Href: l.Href, NoFollow: l.NoFollow})
		}
		// Where the page tried to send its main frame is a link it gives, like an <a>.
		for _, nav := range out.Navigations {
			found.Add(admit.Found{Href: nav})
		}
		o.Links = len(found.Cands)
		st, err := r.Admit(ctx, ci, found)
		if err != nil {
			return 0, err
		}
		admitted = st.New
	}
	for _, wait := range []func(context.Context) error{stored, loadsStored} {
		if wait != nil {
			if err := wait(ctx); err != nil {
				return 0, err
			}
		}
	}
	log.Info("rendered", "url", j.URL, "requests", out.Requests, "blocked", out.Blocked, "domBytes", len(out.DOM),
		"links", o.Links, "admitted", admitted, "dialogs", out.Dialogs, "errors", out.Errors)
	return admitted, r.Store.FinishRender(ctx, j, owner, o)
}
