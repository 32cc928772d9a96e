package config

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// ConnectRule sends connections for hosts matching Pattern to Address instead of the
// host's DNS answer, like curl's --connect-to. Pattern is an exact host name, or "*.suffix"
// for any subdomain of suffix, or "*" for every host.
type ConnectRule struct {
	Pattern string
	Address string
}

// ParseConnectTo reads "PATTERN=HOST:PORT[,PATTERN=HOST:PORT...]".
func ParseConnectTo(v string) ([]ConnectRule, error) {
	var rules []ConnectRule
	for _, part := range strings.Split(v, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		pattern, addr, ok := strings.Cut(part, "=")
		pattern = strings.ToLower(strings.TrimSpace(pattern))
		addr = strings.TrimSpace(addr)
		if !ok || pattern == "" {
			return nil, fmt.Errorf("rule %q: want PATTERN=HOST:PORT", part)
		}
		if strings.Contains(pattern[1:], "*") || (strings.HasPrefix(pattern, "*") && pattern != "*" && !strings.HasPrefix(pattern, "*.")) {
			return nil, fmt.Errorf("rule %q: a wildcard is only allowed as a leading \"*.\" or alone", part)
		}
		host, port, err := net.SplitHostPort(addr)
		if err != nil || host == "" {
			return nil, fmt.Errorf("rule %q: address %q is not HOST:PORT", part, addr)
		}
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("rule %q: bad port %q", part, port)
		}
		rules = append(rules, ConnectRule{Pattern: pattern, Address: addr})
	}
	return rules, nil
}

// Match reports whether host (without port, lower case) matches the rule's pattern.
func (r ConnectRule) Match(host string) bool {
	switch {
	case r.Pattern == "*":
		return true
	case strings.HasPrefix(r.Pattern, "*."):
		return strings.HasSuffix(host, r.Pattern[1:])
	default:
		return host == r.Pattern
	}
}
