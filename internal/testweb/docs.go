package testweb

import (
	"net/http"
)

// ---- docs.test: a real documentation site (Config.DocsDir). ----------------------------------
//
// docs.test serves a directory of static files as they are — Python's HTML manual from
// Debian in the fidelity tests: real pages with real stylesheets, scripts and images, which a
// replay must show as the live site does. Seed http://docs.test/ (its index.html).

// DocsHost is the host name the documentation site is served under.
const DocsHost = "docs.test"

type docsSite struct {
	w     *Web
	files http.Handler
}

func (s *docsSite) host() string                 { return DocsHost }
func (s *docsSite) robots() robotsSpec           { return allowAll }
func (s *docsSite) sitemapPages() []string       { return nil }
func (s *docsSite) page(string, string) pageInfo { return pageInfo{kind: pageOther} }

func (s *docsSite) serve(w http.ResponseWriter, r *http.Request) { s.files.ServeHTTP(w, r) }
