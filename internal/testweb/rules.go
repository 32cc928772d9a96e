package testweb

import (
	"strings"
	"time"
)

// rule is one Allow or Disallow line of the group that applies to the crawler under test.
type rule struct {
	allow   bool
	pattern string
}

// ruleset is the test web's own reading of a robots.txt group, used for the audit and the
// truth. It is deliberately independent of the crawler's parser: RFC 9309 §2.2.2 longest
// match, Allow wins a tie, '*' wildcards and a '$' end anchor.
type ruleset struct {
	rules       []rule
	disallowAll bool          // robots.txt unreachable (5xx): RFC 9309 §2.3.1.4
	crawlDelay  time.Duration // 0: none given
}

func (rs ruleset) allowed(path string) bool {
	if rs.disallowAll {
		return false
	}
	if path == "/robots.txt" {
		return true
	}
	best, allow := -1, true
	for _, r := range rs.rules {
		if r.pattern == "" {
			continue // "Disallow:" with no path allows everything
		}
		if n := matchLen(r.pattern, path); n >= 0 {
			if n > best || (n == best && r.allow) {
				best, allow = n, r.allow
			}
		}
	}
	return allow
}

// matchLen returns the pattern's length when it matches path from the start, else -1.
func matchLen(pattern, path string) int {
	anchored := strings.HasSuffix(pattern, "$")
	p := strings.TrimSuffix(pattern, "$")
	if globMatch(p, path, anchored) {
		return len(pattern)
	}
	return -1
}

func globMatch(p, s string, anchored bool) bool {
	if p == "" {
		return !anchored || s == ""
	}
	if p[0] == '*' {
		for i := 0; i <= len(s); i++ {
			if globMatch(p[1:], s[i:], anchored) {
				return true
			}
		}
		return false
	}
	if s == "" || p[0] != s[0] {
		return false
	}
	return globMatch(p[1:], s[1:], anchored)
}

// rulePath is what robots.txt rules match: the path and, if any, the query (RFC 9309 §2.2.2).
func rulePath(path, query string) string {
	if query != "" {
		return path + "?" + query
	}
	return path
}
