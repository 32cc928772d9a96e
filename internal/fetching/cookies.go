package fetching

import (
	"context"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/publicsuffix"

	"github.com/trawlerdev/trawler/internal/policy"
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
	saveMu        sync.Mutex // held from a change to its save, so saves land in order
	mu            sync.Mutex
	jar           *cookiejar.Jar
	lines         []store.SetCookie
}

// cookies is the lease's jar for crawl ci, loaded at its first use (nil when ci keeps none).
func (b *leaseRun) cookies(ctx context.Context, ci *policy.Crawl) (*cookieJar, error) {
	if !ci.Spec.Cookies {
		return nil, nil
	}
	b.mu.Lock()
	j := b.jars[ci.ID]
	b.mu.Unlock()
	if j != nil {
		return j, nil
	}
	saved, err := b.f.Hosts.CookieJar(ctx, ci.ID, b.in.Host)
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
		age := min(time.Duration(min(c.MaxAge, int(maxCookieAge/time.Second)))*time.Second, maxCookieAge)
		c.Expires, c.MaxAge = sc.At.Add(age), 0
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

// maxCookieAge caps how long a kept cookie lives (RFC 6265bis: 400 days).
const maxCookieAge = 400 * 24 * time.Hour

// record keeps the Set-Cookie headers of an answer from rawURL and saves the jar when it
// changed: one line per cookie (its name, domain and path), a deleted or malformed one kept
// nowhere, the newest within the caps. Saves go in the order the jar changed.
func (j *cookieJar) record(ctx context.Context, rawURL string, lines []string, at time.Time,
	save func(context.Context, []store.SetCookie) error) error {
	if j == nil || len(lines) == 0 {
		return nil
	}
	j.saveMu.Lock()
	defer j.saveMu.Unlock()
	j.mu.Lock()
	changed := false
	for _, l := range lines {
		c, err := http.ParseSetCookie(l)
		if err != nil {
			continue // a malformed header sets nothing, as in a browser
		}
		sc := store.SetCookie{URL: rawURL, Line: l, At: at}
		id := cookieID(c, rawURL)
		i := slices.IndexFunc(j.lines, func(o store.SetCookie) bool { return savedID(o) == id })
		if i >= 0 && j.lines[i].Line == l && c.MaxAge == 0 {
			// The same cookie set again (a session cookie on every page): the same jar, nothing
			// to save; but it is fresh, so it moves to the newest end, past the caps' reach.
			kept := j.lines[i]
			j.lines = append(slices.Delete(j.lines, i, i+1), kept)
			continue
		}
		j.apply(sc)
		if i >= 0 {
			j.lines = slices.Delete(j.lines, i, i+1)
		}
		if !(c.MaxAge < 0 || (!c.Expires.IsZero() && c.Expires.Before(at))) { // a deletion keeps nothing
			j.lines = append(j.lines, sc)
		}
		changed = true
	}
	size := 0
	for _, l := range j.lines {
		size += len(l.Line) + len(l.URL)
	}
	for len(j.lines) > 0 && (len(j.lines) > maxJarCookies || size > maxJarBytes) {
		size -= len(j.lines[0].Line) + len(j.lines[0].URL)
		j.lines = j.lines[1:]
	}
	keep := append([]store.SetCookie{}, j.lines...)
	j.mu.Unlock()
	if !changed {
		return nil
	}
	return save(ctx, keep)
}

// cookieID names a cookie as a jar does: its name, domain and path (RFC 6265 §5.3), the
// defaults taken from the URL that set it.
func cookieID(c *http.Cookie, rawURL string) string {
	u, _ := url.Parse(rawURL)
	domain := strings.TrimPrefix(strings.ToLower(c.Domain), ".")
	if domain == "" && u != nil {
		domain = u.Hostname()
	}
	path := c.Path
	if path == "" || !strings.HasPrefix(path, "/") {
		path = "/"
		if u != nil {
			if i := strings.LastIndex(u.Path, "/"); i > 0 {
				path = u.Path[:i]
			}
		}
	}
	return c.Name + "\x00" + domain + "\x00" + path
}

func savedID(sc store.SetCookie) string {
	c, err := http.ParseSetCookie(sc.Line)
	if err != nil {
		return ""
	}
	return cookieID(c, sc.URL)
}
