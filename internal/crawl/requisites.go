package crawl

import (
	"fmt"
	"slices"
)

// Requisites configures a crawl's page requisites: the files a browser fetches to show an
// archived page (stylesheets, scripts, images, fonts, icons, media), fetched and archived so
// the page replays as it looked. On by default. They enter the frontier as URLs of their own
// hosts (SourceEmbed), paced and judged by robots.txt there, whatever the crawl's scope,
// maxDepth or allowPatterns (a CDN's script is the page's, not a link to follow); its deny
// lists and allowed ports still hold. They are never read for links: a stylesheet only for
// its own requisites, at most MaxRequisiteHops deep. A spec recorded before requisites
// existed has none (nil): a running crawl does not start taking other hosts' files after an
// upgrade; WithDefaults gives every new crawl the default.
type Requisites struct {
	Off        bool     `json:"off,omitempty"`
	MaxPerPage int      `json:"maxPerPage,omitempty"` // per page and per stylesheet (default 100)
	Kinds      []string `json:"kinds,omitempty"`      // the kinds taken (default: all of RequisiteKinds)
}

// Requisite kinds, as a spec names them (requisites.kinds).
const (
	RequisiteStyle  = "style"  // <link rel=stylesheet>, @import
	RequisiteScript = "script" // <script src>, <link rel=modulepreload>
	RequisiteImage  = "image"  // <img src|srcset>, <picture><source srcset>, SVG <image>, CSS url()
	RequisiteFont   = "font"   // an @font-face url(), <link rel=preload as=font>
	RequisiteMedia  = "media"  // <video>/<audio> src, <source src>, <track src>
	RequisiteIcon   = "icon"   // <link rel=icon|apple-touch-icon|manifest|mask-icon>
	RequisiteObject = "object" // <object data>, <embed src>, SVG <use href> to another file
)

// RequisiteKinds are every kind, the default a crawl takes.
var RequisiteKinds = []string{RequisiteStyle, RequisiteScript, RequisiteImage, RequisiteFont, RequisiteMedia, RequisiteIcon, RequisiteObject}

const (
	// DefaultRequisitesPerPage bounds the requisites one page (or stylesheet) admits.
	DefaultRequisitesPerPage = 100
	maxRequisitesPerPage     = 1000
	// MaxRequisiteHops bounds the stylesheets read for requisites: a page's own requisites are
	// hop 0, what its stylesheets name hop 1, what an imported stylesheet names hop 2, and so
	// on; hop 5 is not read. Real themes chain imports (Sphinx's: theme → default → classic →
	// basic, hop 3); each stylesheet imports at most MaxImports, and what stylesheets name is
	// free of the page budgets only within the crawl's room for requisites (admit.Budget).
	// (A redirect is a hop too.)
	MaxRequisiteHops = 5
	// MaxImports bounds the stylesheets one stylesheet imports (the rest of its requisites
	// count against the per-page cap).
	MaxImports = 10
	// MaxRequisiteHosts bounds the hosts out of the crawl's scope one page (or stylesheet)
	// names requisites on: each costs a host workflow.
	MaxRequisiteHosts = 10
)

// PerPage is the cap on requisites a page admits (0 when off, or not configured).
func (r *Requisites) PerPage() int {
	if r == nil || r.Off {
		return 0
	}
	if r.MaxPerPage <= 0 {
		return DefaultRequisitesPerPage
	}
	return r.MaxPerPage
}

// Takes says whether the crawl takes requisites of kind.
func (r *Requisites) Takes(kind string) bool {
	return r != nil && !r.Off && (len(r.Kinds) == 0 || slices.Contains(r.Kinds, kind))
}

func (r *Requisites) validate() []error {
	if r == nil {
		return nil
	}
	var errs []error
	if r.MaxPerPage < 0 || r.MaxPerPage > maxRequisitesPerPage {
		errs = append(errs, fmt.Errorf("requisites.maxPerPage: %d is outside 0…%d", r.MaxPerPage, maxRequisitesPerPage))
	}
	for _, k := range r.Kinds {
		if !slices.Contains(RequisiteKinds, k) {
			errs = append(errs, fmt.Errorf("requisites.kinds: %q is not one of %v", k, RequisiteKinds))
		}
	}
	return errs
}
