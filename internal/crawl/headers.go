package crawl

import (
	"fmt"
	"net/http"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// refusedHeaders are headers a crawl's spec may not set, and why: Trawler sets them itself
// (its conditional requests, its decoding, its User-Agent and robots.txt token), they belong
// to one connection (hop-by-hop, RFC 9110 §7.6.1), or they carry a session that must not be
// sent to every host of a crawl.
var refusedHeaders = map[string]string{
	"Host":                "the URL names the host",
	"Cookie":              "cookies come from the sites themselves (a crawl's cookie jar)",
	"User-Agent":          "set the spec's userAgent: robots.txt is read for its product token",
	"Accept-Encoding":     "Trawler decodes gzip, br and deflate and asks for them itself",
	"Content-Length":      "requests have no body",
	"If-None-Match":       "Trawler's conditional requests set it",
	"If-Modified-Since":   "Trawler's conditional requests set it",
	"If-Match":            "a crawl's requests are not conditional on it",
	"If-Unmodified-Since": "a crawl's requests are not conditional on it",
	"If-Range":            "a crawl fetches whole bodies",
	"Range":               "a crawl fetches whole bodies",
	"Expect":              "requests have no body",
	"Cookie2":             "cookies come from the sites themselves (a crawl's cookie jar)",
	"Connection":          "hop-by-hop",
	"Keep-Alive":          "hop-by-hop",
	"Proxy-Connection":    "hop-by-hop",
	"Proxy-Authorization": "hop-by-hop (a proxy's credentials go in its URL)",
	"Te":                  "hop-by-hop",
	"Trailer":             "hop-by-hop",
	"Transfer-Encoding":   "hop-by-hop",
	"Upgrade":             "hop-by-hop",
}

// CheckHeader says what is wrong with a header a spec asks to send, naming it.
func CheckHeader(name, value string) error {
	switch {
	case !httpguts.ValidHeaderFieldName(name):
		return fmt.Errorf("%q is not a header name", name)
	case !httpguts.ValidHeaderFieldValue(value):
		return fmt.Errorf("%s: its value has characters a header cannot carry (the value is not shown: it may be a secret)", name)
	}
	if why, ok := refusedHeaders[http.CanonicalHeaderKey(name)]; ok {
		return fmt.Errorf("%s may not be set: %s", name, why)
	}
	return nil
}

// Header is the spec's headers as an http.Header (nil when none).
func (s Spec) Header() http.Header {
	if len(s.Headers) == 0 {
		return nil
	}
	h := make(http.Header, len(s.Headers))
	for name, value := range s.Headers {
		h.Set(name, strings.TrimSpace(value))
	}
	return h
}
