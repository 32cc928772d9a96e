package admit

import (
	"context"
	"errors"
	"net/url"
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/policy"
	"github.com/trawlerdev/trawler/internal/store"
	"github.com/trawlerdev/trawler/internal/urlnorm"
)

// Every URL a fetched thing gives — a page's link or canonical, a redirect's Location, a
// sitemap's entry or nested sitemap, a feed's item, a rendered page's link or navigation — goes
// through Discover: resolved against its base, made a candidate, judged by the crawl's rules,
// and counted by reason when refused. The stages differ only in where the URL was found (From)
// and what it says of itself (Found).

// From is where found URLs come from: what their candidates inherit.
type From struct {
	Depth  int          // the candidates' depth (link hops from a seed)
	Hops   int          // redirect hops, or sitemap nesting
	Source crawl.Source // link, redirect, sitemap, sitemap file, feed…
}

// Found is one URL as written where it was found.
type Found struct {
	Href      string
	NoFollow  bool                   // the link (or its page) says nofollow: resolved, never admitted
	Published time.Time              // a feed item's date: a fresh one ranks higher
	Tune      func(*store.Candidate) // source-specific adjustments (a sitemap's hints) before judging
}

// Why a found URL is not a candidate without being refused by the crawl's rules (not counted
// as rejections).
const (
	FoundAgain    = "found already in this pass" // another spelling of a key this pass has
	FoundNoFollow = "nofollow"
	FoundNotHTTP  = "not an http(s) URL" // mailto:, javascript:, tel: … are not links to crawl
)

// Discovery is one pass over found URLs: the candidates to admit, and the refused ones by
// reason.
type Discovery struct {
	crawls   *policy.Crawls
	ci       *policy.Crawl
	base     *url.URL
	from     From
	max      int // candidates at most (0: no cap); past it, policy.RejectOutlinks
	now      time.Time
	seen     map[string]bool
	Cands    []store.Candidate
	Rejected map[string]int
}

// Discover starts a pass over URLs found at base (nil: they must be absolute), with at most
// max candidates (0: no cap).
func Discover(c *policy.Crawls, ci *policy.Crawl, base *url.URL, from From, max int) *Discovery {
	return &Discovery{crawls: c, ci: ci, base: base, from: from, max: max, now: time.Now(), seen: map[string]bool{}, Rejected: map[string]int{}}
}

// Add judges one found URL. It returns its candidate when the URL resolved (Key empty when it
// did not) and why it is not admitted ("": it is one of Cands). A refusal by the crawl's rules
// is counted in Rejected; FoundAgain, FoundNoFollow and FoundNotHTTP are not.
func (d *Discovery) Add(f Found) (store.Candidate, string) {
	n, err := d.crawls.Norm.ResolveRequest(d.base, f.Href)
	if err != nil {
		if errors.Is(err, urlnorm.ErrScheme) {
			return store.Candidate{}, FoundNotHTTP
		}
		d.Rejected[policy.RejectBadURL]++
		return store.Candidate{}, policy.RejectBadURL
	}
	c := d.crawls.Candidate(n, d.from.Depth, d.from.Hops, d.from.Source)
	c.Priority += policy.Fresh(f.Published, d.now)
	if f.Tune != nil {
		f.Tune(&c)
	}
	if d.seen[c.Key] {
		return c, FoundAgain
	}
	d.seen[c.Key] = true
	if f.NoFollow {
		return c, FoundNoFollow
	}
	why := d.ci.Admissible(c)
	if why == "" && !d.includes(c) {
		why = policy.RejectNotAllowed
	}
	if why == "" && d.max > 0 && len(d.Cands) >= d.max {
		why = policy.RejectOutlinks
		if d.from.Source == crawl.SourceEmbed {
			why = policy.RejectRequisites
		}
	}
	if why != "" {
		d.Rejected[why]++
		return c, why
	}
	d.Cands = append(d.Cands, c)
	return c, ""
}

// includes says whether the crawl's allow patterns take c in. Seeds are always crawled (they
// are not discovered), and so are where a seed redirects to (http to https, / to /home) and
// sitemap files (read for the pages they list, which the patterns judge; never stored as
// pages).
func (d *Discovery) includes(c store.Candidate) bool {
	switch {
	case d.from.Source == crawl.SourceSitemapFile, d.from.Source == crawl.SourceEmbed:
		return true // (a page's requisite is the page's: allowPatterns judge pages)
	case d.from.Source == crawl.SourceRedirect && d.from.Depth == 0:
		return true
	}
	return d.ci.Includes(c.Key)
}

// LimitForeignHosts keeps the candidates of at most n hosts out of the crawl's scope, the
// first ones found; the others are refused (policy.RejectReqHosts). A page's requisites
// may be on other hosts (a CDN), each costing a host workflow: a page naming hundreds is
// not let to start hundreds.
func (d *Discovery) LimitForeignHosts(n int) {
	hosts := map[string]bool{}
	keep := d.Cands[:0]
	for _, c := range d.Cands {
		if !d.ci.InScope(c.Host) && !hosts[c.Host] {
			if len(hosts) >= n {
				d.Rejected[policy.RejectReqHosts]++
				continue
			}
			hosts[c.Host] = true
		}
		keep = append(keep, c)
	}
	d.Cands = keep
}

// Refused is how many found URLs the crawl's rules refused.
func (d *Discovery) Refused() int {
	n := 0
	for _, v := range d.Rejected {
		n += v
	}
	return n
}

// Merge adds another pass's candidates and refusals to d (a processing batch admits all its
// pages' links of one crawl at once).
func (d *Discovery) Merge(o *Discovery) {
	d.Cands = append(d.Cands, o.Cands...)
	for r, n := range o.Rejected {
		d.Rejected[r] += n
	}
}

// AdmitDiscovered admits a pass's candidates and counts its refusals on the crawl (the one
// count of rejected discoveries, whatever found them).
func (a *Admitter) AdmitDiscovered(ctx context.Context, ci *policy.Crawl, d *Discovery) (AdmitStats, error) {
	var st AdmitStats
	if len(d.Cands) > 0 {
		var err error
		if st, err = a.Admit(ctx, ci, d.Cands); err != nil {
			return st, err
		}
	}
	// Counted once per pass; a retried activity may count its refusals again (stats only).
	if err := a.Store.Crawls().CountRejections(ctx, ci.ID, d.Rejected); err != nil {
		return st, err
	}
	return st, nil
}
