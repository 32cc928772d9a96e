package fetch

import (
	"fmt"
	"net/http"
	"strings"
)

// requestHead renders the request as sent: request line, Host, then the headers we set (the
// transport adds nothing else to a GET: we set Accept-Encoding ourselves).
func requestHead(r *http.Request, sent Request) string {
	h := r.Header
	if !sent.RecordSecrets {
		h = redact(h, sent.Header)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "GET %s HTTP/1.1\r\nHost: %s\r\n", r.URL.RequestURI(), r.Host)
	if r.Host == "" {
		b.Reset()
		fmt.Fprintf(&b, "GET %s HTTP/1.1\r\nHost: %s\r\n", r.URL.RequestURI(), r.URL.Host)
	}
	_ = h.WriteSubset(&b, nil)
	b.WriteString("\r\n")
	return b.String()
}

// Redacted stands in a recorded request head for a value that was sent but is not kept.
const Redacted = "[redacted]"

// secretHeaders are sent values no record keeps by default, besides the crawl's own headers.
var secretHeaders = []string{"Authorization", "Cookie", "Proxy-Authorization", "Set-Cookie"}

// redact is h with the values of own's names and of secretHeaders replaced by Redacted (h
// itself when none is present).
func redact(h, own http.Header) http.Header {
	var out http.Header
	hide := func(name string) {
		if _, ok := h[name]; ok {
			if out == nil {
				out = h.Clone()
			}
			out[name] = []string{Redacted}
		}
	}
	for name := range own {
		hide(http.CanonicalHeaderKey(name))
	}
	for _, name := range secretHeaders {
		hide(name)
	}
	if out == nil {
		return h
	}
	return out
}

// responseHead renders the status line and headers as received (Go canonicalises header
// names and joins nothing; the order is sorted, as WriteSubset writes it).
func responseHead(resp *http.Response, sent Request) string {
	h := resp.Header
	if !sent.RecordSecrets {
		h = redact(h, nil) // a session the site sets (Set-Cookie) is the crawl's, not the archive's
	}
	var b strings.Builder
	fmt.Fprintf(&b, "HTTP/%d.%d %s\r\n", resp.ProtoMajor, resp.ProtoMinor, resp.Status)
	_ = h.WriteSubset(&b, nil)
	b.WriteString("\r\n")
	return b.String()
}
