package policy

import (
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/store"
	"github.com/trawlerdev/trawler/internal/urlnorm"
)

// Candidate builds a frontier candidate from a URL's request form (urlnorm): it is fetched as
// that, and known to the frontier by its key form.
func (c *Crawls) Candidate(request string, depth, hops int, source crawl.Source) store.Candidate {
	key, err := c.Norm.Normalize(request)
	if err != nil { // (the key rules only remove: a request form that is valid has a key)
		key = request
	}
	return store.Candidate{URL: request, Key: key, Hash: urlnorm.Hash(key), Host: urlnorm.Authority(key),
		Depth: depth, Hops: hops, Source: source, Priority: priority(depth, source)}
}

// priority orders a host's claims (highest first; ties by depth, then due time):
//
//	1/(1+depth)                      shallower pages first
//	+ 1                              seeds and sitemap files
//	+ 0.5 + 0.5·<priority>           pages a sitemap lists (its <priority>, 0.5 if absent;
//	+ 0.25                           SitemapPriority), and lately changed by its <lastmod>
//	+ 0.5 or 0.25                    feed items published in the last 2 days or 2 weeks (Fresh)
//	+ 0.05 per further in-link       added when a queued URL is linked again (store.Admit)
//
// Host-level signals shape when a host's batch runs (its delay, backoff, Retry-After), not
// the order within it.
func priority(depth int, source crawl.Source) float32 {
	p := 1 / float32(1+depth)
	switch source {
	case crawl.SourceSeed, crawl.SourceSitemapFile:
		p += 1
	case crawl.SourceSitemap:
		p += 0.75
	}
	return p
}

// SitemapPriority adjusts a sitemap entry's candidate by the entry's own <priority> (0 to 1;
// negative: absent, which counts as 0.5) and <lastmod> (within 30 days: changed lately).
func SitemapPriority(c *store.Candidate, sitemapPriority float64, lastMod, now time.Time) {
	if sitemapPriority >= 0 {
		c.Priority += float32(sitemapPriority-0.5) * 0.5
	}
	if !lastMod.IsZero() && now.Sub(lastMod) < 30*24*time.Hour {
		c.Priority += 0.25
	}
}

// Fresh is what a feed item's publication adds to its link's priority: a feed's new items are
// what its site just published.
func Fresh(published, now time.Time) float32 {
	switch age := now.Sub(published); {
	case published.IsZero():
		return 0
	case age < 48*time.Hour:
		return 0.5
	case age < 14*24*time.Hour:
		return 0.25
	}
	return 0
}
