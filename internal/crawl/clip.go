package crawl

import (
	"strconv"
	"unicode/utf8"
)

// Caps on the strings a server makes, applied where they enter a record, a log line or a
// Temporal payload: a hostile server can send a megabyte status line (Go's client quotes it
// whole into its error), a megabyte ETag or Content-Type, and one such string must not make a
// lease's result or heartbeat exceed Temporal's payload limit, or a row exceed an index's.
const (
	// MaxErrorBytes caps an error or a reason: room for a URL and what went wrong.
	MaxErrorBytes = 1024
	// MaxValidatorBytes caps an ETag or Last-Modified. Longer ones are dropped, not cut: a cut
	// validator would never match, and sending it back would cost the server as much again.
	MaxValidatorBytes = 1024
	// MaxFieldBytes caps a short header value kept as a field (a Content-Type).
	MaxFieldBytes = 256
)

// Clip returns s when it fits in limit bytes, else its head and its tail, each cut at a
// character boundary, around a mark of how much was cut, the whole no longer than limit. The
// tail stays because an error names its cause last ("fetch <URL>: Get <URL>: request timed
// out"), and errors are classed by it.
func Clip(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	mark := " … [cut " + strconv.Itoa(len(s)) + " bytes] … "
	keep := limit - len(mark)
	if keep < 2 { // no room for the mark
		keep, mark = max(limit, 0), ""
	}
	head, tail := keep/2, keep-keep/2
	if mark == "" {
		head, tail = keep, 0
	}
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	from := len(s) - tail
	for from < len(s) && !utf8.RuneStart(s[from]) {
		from++
	}
	return s[:head] + mark + s[from:]
}

// ClipError is Clip at MaxErrorBytes, for errors and reasons.
func ClipError(s string) string { return Clip(s, MaxErrorBytes) }

// Validator returns an ETag or Last-Modified value, or "" when it is over MaxValidatorBytes.
func Validator(s string) string {
	if len(s) > MaxValidatorBytes {
		return ""
	}
	return s
}
