// Package robots owns the robots.txt policy: which fetch outcomes mean allow-all or
// disallow-all (RFC 9309 §2.3.1), the 500 KiB parse limit, the product token taken from the
// User-Agent, and matching on top of temoto/robotstxt.
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
	group       *robotstxt.Group
	CrawlDelay  time.Duration
	Sitemaps    []string
	Reason      string // why the whole host is allowed or disallowed, for status and logs
}

// FromStatus builds rules from a fetch of /robots.txt: 2xx are parsed; 4xx (not 429) mean no
// restrictions; 5xx, 429 and network errors (status 0) mean complete disallow until a later
// fetch succeeds (RFC 9309 §2.3.1.3–4).
func FromStatus(status int, body []byte, productToken string) *Rules {
	switch {
	case status >= 200 && status < 300:
		if len(body) > MaxBytes {
			body = body[:MaxBytes]
		}
		data, err := robotstxt.FromBytes(body)
		if err != nil {
			// The parser refused the file; be polite rather than guess.
			return &Rules{disallowAll: true, Reason: "robots.txt unparseable: " + err.Error()}
		}
		g := data.FindGroup(productToken)
		return &Rules{group: g, CrawlDelay: g.CrawlDelay, Sitemaps: data.Sitemaps}
	case status == 429 || status >= 500 || status == 0:
		return &Rules{disallowAll: true, Reason: "robots.txt unreachable"}
	case status >= 400:
		return &Rules{allowAll: true, Reason: "no robots.txt"}
	default:
		return &Rules{disallowAll: true, Reason: "robots.txt answered with an unexpected status"}
	}
}

// Allowed reports whether pathAndQuery (as in the request line) may be fetched.
func (r *Rules) Allowed(pathAndQuery string) bool {
	switch {
	case pathAndQuery == "/robots.txt":
		return true
	case r.disallowAll:
		return false
	case r.allowAll || r.group == nil:
		return true
	}
	return r.group.Test(pathAndQuery)
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
