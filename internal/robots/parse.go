package robots

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/trawlerdev/trawler/internal/pct"
)

// rule is an Allow or Disallow line with its path percent-normalized.
type rule struct {
	allow bool
	path  string
}

type group struct {
	agents     []string // product tokens, lower case; "*" for the default group
	rules      []rule
	crawlDelay time.Duration
}

type file struct {
	groups   []group
	sitemaps []string
	invalid  int
}

// parseFile reads every line it can (RFC 9309 §2.3.1.5) and ignores the rest: lines without a
// colon, rules before the first user-agent line (§2.2.2), unknown records (§2.2.4, which do not
// end a group either), unreadable crawl-delays.
func parseFile(body []byte) file {
	var f file
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	var cur *group
	lastWasAgent := false
	// Lines are walked in place: a slice of every line of a file as big as the cap (500 KiB of
	// short lines, as some sites serve) was the parse's cost. An empty line, between a CR and
	// its LF too, is skipped below like a comment.
	text := string(body)
	for len(text) > 0 {
		line := text
		if i := strings.IndexAny(text, "\r\n"); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			text = ""
		}
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		key, value, ok := strings.Cut(line, ":")
		if !ok {
			f.invalid++
			continue
		}
		key = strings.ToLower(strings.TrimSpace(key))
		value = strings.TrimSpace(value)
		switch key {
		case "user-agent", "useragent", "user agent":
			if !lastWasAgent || cur == nil {
				f.groups = append(f.groups, group{})
				cur = &f.groups[len(f.groups)-1]
			}
			cur.agents = append(cur.agents, agentToken(value))
			lastWasAgent = true
			continue
		case "allow", "disallow":
			if cur == nil {
				f.invalid++ // a rule outside any group
			} else if value != "" { // an empty path matches nothing
				cur.rules = append(cur.rules, rule{allow: key == "allow", path: normalizePattern(value)})
			}
		case "crawl-delay", "crawldelay":
			d, err := parseDelay(value)
			if err != nil || cur == nil {
				f.invalid++
			} else if d > cur.crawlDelay {
				cur.crawlDelay = d
			}
		case "sitemap", "sitemaps", "site-map":
			if value != "" {
				f.sitemaps = append(f.sitemaps, value)
			}
			continue // not a group member: does not end the agent list either
		}
		lastWasAgent = false
	}
	return f
}

// groupFor merges every group whose user-agent is token (case-insensitive, exact), or else
// every "*" group (§2.2.1).
func (f file) groupFor(token string) group {
	token = strings.ToLower(token)
	var out group
	found := false
	for _, want := range []string{token, "*"} {
		for _, g := range f.groups {
			for _, a := range g.agents {
				if a == want {
					out.rules = append(out.rules, g.rules...)
					out.crawlDelay = max(out.crawlDelay, g.crawlDelay)
					found = true
					break
				}
			}
		}
		if found {
			return out
		}
	}
	return out
}

// agentToken is the product token of a user-agent value: its leading letters, '_' and '-'
// (§2.2.1), lower case; "*" stays "*".
func agentToken(v string) string {
	if strings.HasPrefix(v, "*") {
		return "*"
	}
	end := 0
	for end < len(v) {
		c := v[end]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '-') {
			break
		}
		end++
	}
	return strings.ToLower(v[:end])
}

// parseDelay reads a Crawl-delay: seconds, fractional allowed, "s" suffix tolerated.
func parseDelay(v string) (time.Duration, error) {
	v = strings.TrimSpace(strings.TrimSuffix(strings.TrimSuffix(strings.ToLower(v), "seconds"), "s"))
	secs, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || secs < 0 || math.IsNaN(secs) || math.IsInf(secs, 0) || secs > 86400 {
		return 0, fmt.Errorf("crawl-delay %q", v)
	}
	return time.Duration(secs * float64(time.Second)), nil
}

// normalizePattern percent-normalizes a rule path, keeping '*' and '$' special, and gives it
// a leading '/'.
func normalizePattern(p string) string {
	if !strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "*") {
		p = "/" + p
	}
	return percentNormalize(p, false)
}

// normalizePath percent-normalizes a request path for matching: '*' and '$' in it are literal
// and so compared in their encoded form (§2.2.3).
func normalizePath(p string) string { return percentNormalize(p, true) }

// percentNormalize decodes %XX of unreserved characters, upper-cases the hex of the others and
// encodes octets outside printable ASCII (§2.2.2) — and '*' and '$' when they are literal.
func percentNormalize(s string, literalSpecials bool) string {
	return pct.Normalize(s, func(c byte) bool {
		return c <= ' ' || c >= 0x7f || literalSpecials && (c == '*' || c == '$')
	})
}

// match applies the rules to a normalized path: the longest matching pattern wins, an Allow
// wins a tie, no match allows (§2.2.2).
func match(rules []rule, path string) bool {
	best, allow := -1, true
	for _, r := range rules {
		if !patternMatch(r.path, path) {
			continue
		}
		if n := len(r.path); n > best || (n == best && r.allow) {
			best, allow = n, r.allow
		}
	}
	return allow
}

// patternMatch reports whether pattern ('*' any run, trailing '$' end) matches a prefix of path.
func patternMatch(pattern, path string) bool {
	anchored := strings.HasSuffix(pattern, "$")
	pattern = strings.TrimSuffix(pattern, "$")
	parts := strings.Split(pattern, "*")
	if !strings.HasPrefix(path, parts[0]) {
		return false
	}
	pos := len(parts[0])
	for i := 1; i < len(parts); i++ {
		last := i == len(parts)-1
		if last && anchored {
			return strings.HasSuffix(path[pos:], parts[i])
		}
		j := strings.Index(path[pos:], parts[i])
		if j < 0 {
			return false
		}
		pos += j + len(parts[i])
	}
	return !anchored || pos == len(path)
}
