package fetching

import (
	"context"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"sync"
	"time"

	"golang.org/x/net/publicsuffix"

	"github.com/trawlerdev/trawler/internal/admit"
	"github.com/trawlerdev/trawler/internal/store"
)

// A crawl with cookies on (spec.cookies) keeps a jar per host: the Set-Cookie headers the host
// sent are kept in Postgres as sent (store.SetCookie), and a lease rebuilds the RFC 6265 jar
// (net/http/cookiejar, with the public suffix list) from them at its first request of the
// crawl's, so a cookie set by one page is sent with the next whichever worker fetches it, and
// a worker's death loses none. A jar serves its own host's requests only (redirects are not
// followed here: each hop is a URL of its own host), so no cookie crosses to another site.

// A host's jar keeps its newest maxJarCookies headers, maxJarBytes at most: a site that sets a
// cookie on every page does not grow it without bound.
const (
	maxJarCookies = 64
	maxJarBytes   = 16 << 10
)

// cookieJar is one crawl's jar for the lease's host.
type cookieJar struct {
	crawlID, host string
	mu            sync.Mutex
	jar           *cookiejar.Jar
	lines         []store.SetCookie
}

// cookies is the lease's jar for crawl ci, loaded at its first use (nil when ci keeps none).
func (b *leaseRun) cookies(ctx context.Context, ci *admit.Crawl) (*cookieJar, error) {
	if !ci.Spec.Cookies {
		return nil, nil
	}
	b.mu.Lock()
	j := b.jars[ci.ID]
	b.mu.Unlock()
	if j != nil {
		return j, nil
	}
	saved, err := b.f.Store.CookieJar(ctx, ci.ID, b.in.Host)
	if err != nil {
		return nil, err
	}
	j = newCookieJar(ci.ID, b.in.Host, saved)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.jars == nil {
		b.jars = map[string]*cookieJar{}
	}
	if old := b.jars[ci.ID]; old != nil {
		return old, nil
	}
	b.jars[ci.ID] = j
	return j, nil
}

func newCookieJar(crawlID, host string, saved []store.SetCookie) *cookieJar {
	jar, _ := cookiejar.New(&cookiejar.Options{PublicSuffixList: publicsuffix.List}) // (never fails)
	j := &cookieJar{crawlID: crawlID, host: host, jar: jar}
	for _, sc := range saved {
		j.apply(sc)
	}
	j.lines = saved
	return j
}

// apply sets one header in the jar, a Max-Age counted from when it came.
func (j *cookieJar) apply(sc store.SetCookie) {
	u, err := url.Parse(sc.URL)
	if err != nil {
		return
	}
	c, err := http.ParseSetCookie(sc.Line)
	if err != nil {
		return // a malformed header sets nothing, as in a browser
	}
	if c.MaxAge > 0 {
		c.Expires, c.MaxAge = sc.At.Add(time.Duration(c.MaxAge)*time.Second), 0
	}
	j.jar.SetCookies(u, []*http.Cookie{c})
}

// send is what the jar sends with a request for rawURL (nil: none; nil jar: none).
func (j *cookieJar) send(rawURL string) []*http.Cookie {
	if j == nil {
		return nil
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.jar.Cookies(u)
}

// took keeps the Set-Cookie headers of an answer from rawURL and returns the jar to save
// (nil when there were none), newest kept within the caps.
func (j *cookieJar) took(rawURL string, lines []string, at time.Time) []store.SetCookie {
	if j == nil || len(lines) == 0 {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, l := range lines {
		sc := store.SetCookie{URL: rawURL, Line: l, At: at}
		j.apply(sc)
		j.lines = append(j.lines, sc)
	}
	size := 0
	for _, l := range j.lines {
		size += len(l.Line) + len(l.URL)
	}
	for len(j.lines) > 0 && (len(j.lines) > maxJarCookies || size > maxJarBytes) {
		size -= len(j.lines[0].Line) + len(j.lines[0].URL)
		j.lines = j.lines[1:]
	}
	return append([]store.SetCookie(nil), j.lines...)
}
