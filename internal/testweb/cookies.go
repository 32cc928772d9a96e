package testweb

import (
	"fmt"
	"net/http"
	"sync/atomic"
)

// ---- cookie.test (Config.Cookies): a site that sets a session cookie and looks for it. ----
//
// Its front page sets session=CookieValue and links CookiePages pages; each of them counts
// whether the request carried the cookie (CookieCounts). Linked from nowhere: seed it.

type cookieSite struct {
	w             *Web
	with, without atomic.Int64
}

// cookie.test's session cookie and its pages besides the front page.
const (
	CookieValue = "trawler-test-session"
	CookiePages = 5
)

func (s *cookieSite) host() string { return "cookie.test" }

func (s *cookieSite) robots() robotsSpec {
	return robotsSpec{profile: "cookie", status: 200, body: "User-agent: *\nAllow: /\n"}
}

func (s *cookieSite) sitemapPages() []string { return nil }

func (s *cookieSite) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/" {
		http.SetCookie(w, &http.Cookie{Name: "session", Value: CookieValue, Path: "/", HttpOnly: true})
		var links []link
		for i := 1; i <= CookiePages; i++ {
			links = append(links, link{href: fmt.Sprintf("/%d", i), text: fmt.Sprintf("page %d", i)})
		}
		htmlPage(w, doc{title: "cookie.test", paragraphs: []string{"A site that remembers its visitors by a session cookie."}, links: links})
		return
	}
	var i int
	if _, err := fmt.Sscanf(r.URL.Path, "/%d", &i); err != nil || i < 1 || i > CookiePages || fmt.Sprintf("/%d", i) != r.URL.Path {
		http.NotFound(w, r)
		return
	}
	c, err := r.Cookie("session")
	if err == nil && c.Value == CookieValue {
		s.with.Add(1)
	} else {
		s.without.Add(1)
	}
	htmlPage(w, doc{title: fmt.Sprintf("cookie.test page %d", i), paragraphs: []string{fmt.Sprintf("Page %d, for visitors with or without a session.", i)}})
}

// page keeps cookie.test out of the truth: its test says what it expects itself.
func (s *cookieSite) page(p, q string) pageInfo { return pageInfo{kind: pageOther} }

// CookieCounts says how many of cookie.test's pages were requested with its session cookie
// and how many without (zeros when it is not served).
func (w *Web) CookieCounts() (with, without int64) {
	s, ok := w.sites["cookie.test"].(*cookieSite)
	if !ok {
		return 0, 0
	}
	return s.with.Load(), s.without.Load()
}
