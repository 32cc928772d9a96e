// Package pct owns percent-encoding normalization (RFC 3986 §6.2.2.1–2), shared by URL
// normalization and robots.txt matching: decode %XX of unreserved characters, upper-case the
// hex of the rest, and encode the bytes a caller says must not appear raw.
package pct

import "strings"

// Normalize rewrites s. A '%' not followed by two hex digits is encoded as %25.
func Normalize(s string, mustEncode func(c byte) bool) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%' && i+2 < len(s) && IsHex(s[i+1]) && IsHex(s[i+2]):
			v := unhex(s[i+1])<<4 | unhex(s[i+2])
			if IsUnreserved(v) {
				b.WriteByte(v)
			} else {
				b.WriteByte('%')
				b.WriteByte(upper(s[i+1]))
				b.WriteByte(upper(s[i+2]))
			}
			i += 2
		case c == '%':
			b.WriteString("%25")
		case mustEncode(c):
			const hex = "0123456789ABCDEF"
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// IsUnreserved reports RFC 3986 unreserved characters.
func IsUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

// IsHex reports a hexadecimal digit.
func IsHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	default:
		return c - 'a' + 10
	}
}

func upper(c byte) byte {
	if 'a' <= c && c <= 'f' {
		return c - 32
	}
	return c
}
