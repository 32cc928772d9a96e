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
// its own requisites, at most MaxRequisiteHops deep.
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
	// MaxRequisiteHops bounds stylesheets read for requisites through @import: a page's
	// stylesheet is hop 1, what it imports hop 2, … .
	MaxRequisiteHops = 3
)

// PerPage is the cap on requisites a page admits (0 when off).
func (r Requisites) PerPage() int {
	if r.Off {
		return 0
	}
	if r.MaxPerPage <= 0 {
		return DefaultRequisitesPerPage // (also for a spec recorded before requisites existed)
	}
	return r.MaxPerPage
}

// Takes says whether the crawl takes requisites of kind.
func (r Requisites) Takes(kind string) bool {
	return !r.Off && (len(r.Kinds) == 0 || slices.Contains(r.Kinds, kind))
}

func (r Requisites) validate() []error {
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
