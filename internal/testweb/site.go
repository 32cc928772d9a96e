package testweb

import (
	"net/http"
	"time"
)

// site is one virtual host.
type site interface {
	robots() robotsSpec
	// serve answers every request but robots.txt.
	serve(w http.ResponseWriter, r *http.Request)
	// page tells the truth computation what path holds.
	page(path, query string) pageInfo
	// sitemapPages lists the URLs the host's sitemaps announce.
	sitemapPages() []string
}

// schemeRobots is a site whose https:// robots.txt differs from its http:// one.
type schemeRobots interface {
	robotsFor(secure bool) robotsSpec
}

// robotsOf is the robots.txt a site answers over http:// (secure false) or https://.
func robotsOf(s site, secure bool) robotsSpec {
	if sr, ok := s.(schemeRobots); ok {
		return sr.robotsFor(secure)
	}
	return s.robots()
}

// robotsSpec is what a host answers for /robots.txt and what a compliant crawler must apply.
type robotsSpec struct {
	profile  string
	status   int
	body     string
	redirect string        // path /robots.txt redirects to; the body is served there
	slow     time.Duration // delay before answering
	rules    ruleset
}

type pageKind int

const (
	pageNone     pageKind = iota // 404
	pageOK                       // 200 HTML a crawler should fetch and store
	pageRedirect                 // 3xx to links[0]
	pageDead                     // fails forever (5xx)
	pageOther                    // served, but outside the truth (traps, hostile responses)
)

type pageInfo struct {
	kind  pageKind
	links []string // absolute URLs a compliant crawler follows from it
}
