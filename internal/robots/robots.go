// Package robots owns the robots.txt policy (RFC 9309): which fetch outcomes mean allow-all or
// disallow-all (§2.3.1), the 500 KiB parse limit (§2.5), the product token taken from the
// User-Agent, and a thin wrapper around temoto/robotstxt that closes its gaps: every parseable
// line is used (§2.3.1.5: one bad line does not void the file), groups are chosen by exact,
// case-insensitive product token and merged (§2.2.1), paths are percent-normalized before
// matching (§2.2.2), an Allow wins a tie with a Disallow (§2.2.2), and /robots.txt is always
// allowed (§2.2.2). temoto matches the (sanitized) group; rules with the special characters
// '*' and '$' (§2.2.3) are matched here, since temoto ranks them by regexp length.
package robots

import (
	"strings"
	"time"

	"github.com/temoto/robotstxt"
)

// MaxBytes is how much of a robots.txt is parsed (RFC 9309 §2.5: at least 500 KiB).
const MaxBytes = 500 << 10

// Cache lifetimes.
const (
	TTL            = 24 * time.Hour   // RFC 9309 §2.4: SHOULD NOT use a cached copy longer
	UnreachableTTL = 30 * time.Minute // after 5xx/network errors: try again sooner
)

// Rules is a host's robots.txt as it applies to one product token.
type Rules struct {
	allowAll    bool
	disallowAll bool
	rules       []rule           // the merged group that applies, normalized
	wildcards   bool             // some rule uses '*' or '$'
	group       *robotstxt.Group // temoto's reading of the sanitized group
	CrawlDelay  time.Duration
	Sitemaps    []string
	Invalid     int    // lines that could not be parsed and were ignored
	Reason      string // why the whole host is allowed or disallowed
}

// FromStatus builds rules from a fetch of /robots.txt (after its redirects): 2xx are parsed;
// 4xx (not 429) mean no restrictions (§2.3.1.3); 5xx, 429 and network errors (status 0) mean
// complete disallow until a later fetch succeeds (§2.3.1.4).
func FromStatus(status int, body []byte, productToken string) *Rules {
	switch {
	case status >= 200 && status < 300:
		if len(body) > MaxBytes {
			body = body[:MaxBytes]
		}
		return fromBody(body, productToken)
	case Unreachable(status):
		return &Rules{disallowAll: true, Reason: "robots.txt unreachable"}
	case status >= 400:
		return &Rules{allowAll: true, Reason: "no robots.txt"}
	default:
		return &Rules{disallowAll: true, Reason: "robots.txt answered with an unexpected status"}
	}
}

func fromBody(body []byte, token string) *Rules {
	f := parseFile(body)
	g := f.groupFor(token)
	r := &Rules{rules: g.rules, CrawlDelay: g.crawlDelay, Sitemaps: f.sitemaps, Invalid: f.invalid}
	for _, rl := range r.rules {
		r.wildcards = r.wildcards || strings.ContainsAny(rl.path, "*$")
	}
	if len(r.rules) == 0 || r.wildcards {
		return r
	}
	// temoto reads the sanitized group. Allow lines come first: among equally long matches it
	// keeps the first, and RFC 9309 wants the Allow.
	var b strings.Builder
	b.WriteString("User-agent: *\n")
	for _, allow := range []bool{true, false} {
		for _, rl := range r.rules {
			if rl.allow == allow {
				if allow {
					b.WriteString("Allow: ")
				} else {
					b.WriteString("Disallow: ")
				}
				b.WriteString(rl.path)
				b.WriteByte('\n')
			}
		}
	}
	if data, err := robotstxt.FromString(b.String()); err == nil {
		r.group = data.FindGroup("*")
	}
	return r
}

// MaxStale is how long a good robots.txt copy keeps being used while the file is unreachable
// (§2.3.1.4 allows "a reasonably long period of time (for example, 30 days)"). Past it, and
// with no good copy at all, an unreachable robots.txt means complete disallow: Trawler never
// assumes allow-all for a host it cannot read.
const MaxStale = 30 * 24 * time.Hour

// Unreachable reports whether a fetch status means the file is undefined (§2.3.1.4).
func Unreachable(status int) bool { return status == 0 || status == 429 || status >= 500 }

// KeepCached says whether a cached copy (its status and when it was fetched) should stand in
// for a fresh fetch that answered freshStatus: only when the fresh one is unreachable and the
// copy is a real answer no older than MaxStale.
func KeepCached(cachedStatus int, cachedAt time.Time, freshStatus int, now time.Time) bool {
	return Unreachable(freshStatus) && !Unreachable(cachedStatus) && !cachedAt.IsZero() && now.Sub(cachedAt) <= MaxStale
}

// Allowed reports whether pathAndQuery (as in the request line) may be fetched.
func (r *Rules) Allowed(pathAndQuery string) bool {
	switch {
	case pathAndQuery == "/robots.txt":
		return true // §2.2.2: implicitly allowed
	case r.disallowAll:
		return false
	case r.allowAll || len(r.rules) == 0:
		return true
	}
	p := normalizePath(pathAndQuery)
	if p == "/robots.txt" {
		return true
	}
	if r.group != nil {
		return r.group.Test(p)
	}
	return match(r.rules, p)
}

// DisallowAll reports whether the host is closed (unreachable robots.txt).
func (r *Rules) DisallowAll() bool { return r.disallowAll }

// ProductToken is the robots.txt token of a User-Agent: its first product name, e.g.
// "TrawlerBot" in "TrawlerBot/0.1 (+https://…)".
func ProductToken(userAgent string) string {
	tok := strings.TrimSpace(userAgent)
	if i := strings.IndexAny(tok, "/ ("); i >= 0 {
		tok = tok[:i]
	}
	return tok
}

// Explain is Allowed with its reason: the rule that decides (e.g. "Disallow: /private/"), or
// why none does.
func (r *Rules) Explain(pathAndQuery string) (allowed bool, why string) {
	allowed = r.Allowed(pathAndQuery)
	switch {
	case pathAndQuery == "/robots.txt":
		return allowed, "/robots.txt itself is always allowed"
	case r.disallowAll || r.allowAll:
		return allowed, r.Reason
	}
	best := -1
	var decisive rule
	for _, rl := range r.rules {
		if patternMatch(rl.path, normalizePath(pathAndQuery)) {
			if n := len(rl.path); n > best || (n == best && rl.allow) {
				best, decisive = n, rl
			}
		}
	}
	if best < 0 {
		return allowed, "no rule matches"
	}
	if decisive.allow {
		return allowed, "Allow: " + decisive.path
	}
	return allowed, "Disallow: " + decisive.path
}
