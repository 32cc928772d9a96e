package fidelity

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/trawlerdev/trawler/internal/fetch"
	"github.com/trawlerdev/trawler/internal/policy"
	"github.com/trawlerdev/trawler/internal/render"
	"github.com/trawlerdev/trawler/internal/store"
	"github.com/trawlerdev/trawler/internal/urlnorm"
	"github.com/trawlerdev/trawler/internal/warc"
)

// Measurer scores a crawl's archived pages: its fields are what it needs.
type Measurer struct {
	Store   *store.Store
	Browser *render.Browser
	Client  *fetch.Client  // the live pages' requests
	Crawls  *policy.Crawls // the crawl's user agent, headers and proxy
	Norm    *urlnorm.Normalizer
	Body    func(ctx context.Context, key string) ([]byte, error) // a stored body by reference
	// MaxBytes caps each live answer's body below the crawl's maxBodyBytes (0: the crawl's).
	MaxBytes int64
	// Shots, if set, is given what each page showed live and replayed, to look at the worst.
	Shots func(page string, live, replay *render.Seen)
}

// Sample picks up to n of the crawl's archived HTML pages: its seeds' first, then a sample of
// the rest drawn the same way each time (a reservoir with a fixed seed, over the pages in
// URL-hash order), so two measures of a crawl look at the same pages.
func (m *Measurer) Sample(ctx context.Context, crawlID string, n int) ([]string, error) {
	seeds, err := m.Store.Inspect().SeedURLs(ctx, crawlID)
	if err != nil {
		return nil, err
	}
	var first, rest []string
	rng := rand.New(rand.NewPCG(1, 2))
	seen := 0
	var after []byte
	for {
		pages, err := m.Store.Inspect().StoredPages(ctx, crawlID, after, time.Time{}, 500)
		if err != nil {
			return nil, err
		}
		for _, p := range pages {
			if p.Status != 200 || !warc.IsHTML(p.ContentType) {
				continue
			}
			if seeds[p.URL] {
				first = append(first, p.URL)
				continue
			}
			seen++
			if len(rest) < n {
				rest = append(rest, p.URL)
			} else if j := rng.IntN(seen); j < n {
				rest[j] = p.URL
			}
		}
		if len(pages) < 500 {
			break
		}
		after = pages[len(pages)-1].Hash
	}
	out := append(first, rest...)
	return out[:min(n, len(out))], nil
}

// Measure looks at each page live and replayed, in the browser's viewport, and scores the
// replay. A page that cannot be looked at live is recorded with its error and no score.
func (m *Measurer) Measure(ctx context.Context, crawlID string, pages []string) ([]store.PageFidelity, error) {
	ci, err := m.Crawls.Get(ctx, crawlID)
	if err != nil {
		return nil, err
	}
	if ci.Unresolved != "" {
		return nil, fmt.Errorf("fidelity: crawl %s: %s", crawlID, ci.Unresolved)
	}
	lv := newLive(m, ci)
	var out []store.PageFidelity
	for _, page := range pages {
		pf := store.PageFidelity{URL: page, MeasuredAt: time.Now()}
		lv.look(page)
		seenLive, err := m.Browser.Look(ctx, page, lv.serve)
		if ctx.Err() != nil { // interrupted: what was cut short is not a measure
			return out, ctx.Err()
		}
		why := incomplete(seenLive, err)
		if why == "" {
			why = lv.pageAnswer() // the page is gone or failing live: nothing to compare with
		}
		if why != "" {
			pf.Error = "live: " + why
			out = append(out, pf)
			continue
		}
		rp := &replay{m: m, crawlID: crawlID}
		seenReplay, err := m.Browser.Look(ctx, page, rp.answer)
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
		pf.Requests, pf.Missing, pf.MissingURLs = int(rp.requests.Load()), int(rp.missing.Load()), rp.urls
		if err != nil || seenReplay.Look == nil {
			pf.Error = fmt.Sprintf("replay: %v", err)
			out = append(out, pf)
			continue
		}
		if m.Shots != nil {
			m.Shots(page, seenLive.Look, seenReplay.Look)
		}
		s, err := Compare(seenLive.Look, seenReplay.Look)
		if err != nil {
			pf.Error = err.Error()
		}
		pf.Pixels, pf.Text, pf.Score = s.Pixels, s.Text, s.Score
		out = append(out, pf)
	}
	return out, nil
}

// incomplete says why a live look is not one to compare a replay with ("": it is): the page
// could not be rendered, or ran out of time before it was whole. A replay compared with half
// a page would score what was never measured.
func incomplete(r *render.Result, err error) string {
	switch {
	case err != nil:
		return err.Error()
	case r == nil || r.Look == nil:
		return "nothing seen"
	}
	for _, e := range r.Errors {
		if strings.HasPrefix(e, render.ErrTimeLimit) {
			return e
		}
	}
	return ""
}
