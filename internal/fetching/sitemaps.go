package fetching

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/trawlerdev/trawler/internal/admit"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/policy"
	"github.com/trawlerdev/trawler/internal/sitemap"
	"github.com/trawlerdev/trawler/internal/store"
)

// discoverSitemaps admits, once per crawl and host, the sitemaps robots.txt names (or
// /sitemap.xml when it names none), whichever crawl fetched that robots.txt.
func (f *Stage) discoverSitemaps(ctx context.Context, ci *policy.Crawl, host string, r *store.Robots, pageURL string) error {
	if r == nil || r.Status < 200 || r.Status >= 500 { // unreachable robots.txt: look again later
		return nil
	}
	first, err := f.Hosts.StartSitemapDiscovery(ctx, ci.ID, host)
	if err != nil || !first {
		return err
	}
	base, err := url.Parse(pageURL)
	if err != nil {
		return nil
	}
	sitemaps := r.Sitemaps
	if len(sitemaps) == 0 {
		sitemaps = []string{"/sitemap.xml"}
	}
	if err := f.admitSitemaps(ctx, ci, base, sitemaps, 0, 0); err != nil {
		// Marked discovered already: logged, and /sitemap.xml or robots.txt's sitemaps of
		// this host are not looked for again by this crawl (links still find its pages).
		f.Hooks.log().Warn("admitting sitemaps failed", "crawl", ci.ID, "host", host, "error", err)
	}
	return nil
}

// MaxSitemapNesting bounds sitemap indexes that list indexes.
const MaxSitemapNesting = 3

// admitSitemaps admits sitemap files (from robots.txt or an index) as URLs of their hosts: they
// are fetched under politeness like pages, and read when they arrive.
func (f *Stage) admitSitemaps(ctx context.Context, ci *policy.Crawl, base *url.URL, locs []string, depth, nesting int) error {
	found := admit.Discover(f.Crawls, ci, base, admit.From{Depth: depth, Hops: nesting, Source: crawl.SourceSitemapFile}, 0)
	for _, loc := range locs {
		found.Add(admit.Found{Href: loc}) // the same rules as links: scope, deny and block patterns, traps
	}
	if _, err := f.Admit(ctx, ci, found); err != nil {
		return fmt.Errorf("admit sitemaps: %w", err)
	}
	return nil
}

// readSitemap admits what a fetched sitemap lists: pages, or (for an index) more sitemaps. It
// returns a note on the sitemap, and an error when the admission failed (ours: the sitemap's
// outcome must not be recorded without its entries).
func (f *Stage) readSitemap(ctx context.Context, ci *policy.Crawl, u crawl.Claimed, body []byte) (string, error) {
	sm, err := sitemap.Parse(body)
	if err != nil {
		return err.Error(), nil
	}
	base, _ := url.Parse(u.URL)
	if sm.Index {
		locs := make([]string, len(sm.Entries))
		for i, e := range sm.Entries {
			locs[i] = e.Loc
		}
		if u.Hops+1 > MaxSitemapNesting {
			return "sitemap indexes nested too deep", nil
		}
		if err := f.admitSitemaps(ctx, ci, base, locs, u.Depth, u.Hops+1); err != nil {
			if store.IsDataError(err) {
				return err.Error(), nil
			}
			return "", err
		}
		return "", nil
	}
	found := admit.Discover(f.Crawls, ci, base, admit.From{Depth: u.Depth + 1, Source: crawl.SourceSitemap}, 0)
	now := time.Now()
	for _, e := range sm.Entries {
		found.Add(admit.Found{Href: e.Loc, Tune: func(c *store.Candidate) {
			c.HintS = int(recrawlHint(e, now) / time.Second)
			policy.SitemapPriority(c, e.Priority, e.LastMod, now)
			if !e.LastMod.IsZero() && !e.LastMod.After(now) { // (a date in the future is no news)
				c.LastMod = e.LastMod // a known URL fetched before it is due again now
			}
		}})
	}
	if _, err := f.Admit(ctx, ci, found); err != nil {
		if store.IsDataError(err) { // the values refused: a retry would fail the same way for ever
			return "admit sitemap entries: " + err.Error(), nil
		}
		return "", fmt.Errorf("admit sitemap entries of %s: %w", u.URL, err)
	}
	if sm.Truncated {
		return "sitemap truncated at the protocol's limits", nil
	}
	return "", nil
}

// recrawlHint is the first recrawl interval a sitemap entry suggests: its <changefreq>, else
// half the time since its <lastmod> (a page unchanged for long changes rarely), else none.
func recrawlHint(e sitemap.Entry, now time.Time) time.Duration {
	if d := crawl.ChangeFreqInterval(e.ChangeFreq); d > 0 {
		return d
	}
	if !e.LastMod.IsZero() && e.LastMod.Before(now) {
		return max(now.Sub(e.LastMod)/2, time.Hour)
	}
	return 0
}
