package fetch

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ParseRetryAfter reads delta-seconds or an HTTP date (RFC 9110 §10.2.3); 0 if absent or bad.
func ParseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil {
		if s < 0 {
			return 0
		}
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
