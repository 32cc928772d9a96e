package testweb

import (
	"net/url"
	"sort"
	"strings"
)

// trackingParams are dropped from canonical URLs; the crawler's normalizer drops them too by
// default (variants.test relies on it).
var trackingParams = []string{"utm_", "fbclid", "gclid"}

// canonicalPath resolves dot segments and decodes percent-encoded unreserved characters
// (RFC 3986 §6.2.2), so URL-spelling variants of one page share a key.
func canonicalPath(raw string) string {
	if raw == "" {
		return "/"
	}
	var b strings.Builder
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c == '%' && i+2 < len(raw) {
			if v, ok := unhex(raw[i+1], raw[i+2]); ok {
				if isUnreserved(v) {
					b.WriteByte(v)
				} else {
					b.WriteByte('%')
					b.WriteString(strings.ToUpper(raw[i+1 : i+3]))
				}
				i += 2
				continue
			}
		}
		b.WriteByte(c)
	}
	segs := strings.Split(b.String(), "/")
	out := make([]string, 0, len(segs))
	for i, s := range segs {
		switch s {
		case ".":
			if i == len(segs)-1 {
				out = append(out, "")
			}
		case "..":
			if len(out) > 1 {
				out = out[:len(out)-1]
			}
			if i == len(segs)-1 {
				out = append(out, "")
			}
		default:
			out = append(out, s)
		}
	}
	p := strings.Join(out, "/")
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return p
}

// canonicalQuery sorts parameters and drops tracking ones.
func canonicalQuery(raw string) string {
	if raw == "" {
		return ""
	}
	parts := strings.Split(raw, "&")
	kept := parts[:0]
	for _, p := range parts {
		if p == "" {
			continue
		}
		name, _, _ := strings.Cut(p, "=")
		if n, err := url.QueryUnescape(name); err == nil {
			name = n
		}
		tracking := false
		for _, t := range trackingParams {
			tracking = tracking || strings.HasPrefix(strings.ToLower(name), t)
		}
		if !tracking {
			kept = append(kept, p)
		}
	}
	sort.Strings(kept)
	return strings.Join(kept, "&")
}

// canonicalURL is the key for a request: http scheme, host without port, canonical path and
// query.
func canonicalURL(host, rawPath, rawQuery string) string {
	u := "http://" + host + canonicalPath(rawPath)
	if q := canonicalQuery(rawQuery); q != "" {
		u += "?" + q
	}
	return u
}

func isUnreserved(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

func unhex(a, b byte) (byte, bool) {
	h, ok1 := hexVal(a)
	l, ok2 := hexVal(b)
	return h<<4 | l, ok1 && ok2
}

func hexVal(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
