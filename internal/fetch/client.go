// Package fetch owns the crawler's HTTP client: keep-alive pools per host, connect and total
// timeouts, compressed transfer (gzip, br, deflate) decoded under a size cap so a compression
// bomb is cut short, a cap on the bytes read (truncated and marked), conditional requests,
// Retry-After parsing, and redirects handed back to the caller: each hop is a request of its
// own, judged and politeness-scheduled by the caller (robots.txt's hops too: fetching).
package fetch

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"sync"
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/membudget"
	"github.com/trawlerdev/trawler/internal/netguard"
)

// Options configures a Client.
type Options struct {
	Dialer          *netguard.Dialer
	MaxIdlePerHost  int
	MaxHeaderBytes  int64
	TLSHandshake    time.Duration
	ResponseHeaders time.Duration // time to the response headers
	// RootCAs, if set, are the certificate authorities https:// answers are checked against
	// (the system's and any extra ones an operator names); nil means the system's.
	RootCAs *x509.CertPool
	// TrustedProxy is the worker's own outbound proxy (TRAWLER_PROXY, as a URL): dialed as
	// named, where a proxy a crawl's spec names is dialed through the guard (proxy.go).
	TrustedProxy string
	// Budget bounds the body bytes this process holds across its requests (nil: no bound).
	// A request waits for room before it is sent, and while its body grows; its Response
	// holds the bytes until Release.
	Budget *membudget.Budget
}

// Client fetches pages.
type Client struct {
	plain *http.Client // never follows redirects

	opts    Options
	mu      sync.Mutex
	proxied map[string]*Client // by proxy URL: the same client, through that proxy (proxy.go)
}

// New builds a Client.
func New(o Options) *Client {
	if o.Dialer == nil {
		o.Dialer = netguard.New(netguard.Options{})
	}
	if o.MaxIdlePerHost == 0 {
		o.MaxIdlePerHost = 2
	}
	if o.MaxHeaderBytes == 0 {
		o.MaxHeaderBytes = 1 << 20
	}
	if o.TLSHandshake == 0 {
		o.TLSHandshake = 10 * time.Second
	}
	return newClient(o, transport(o, o.Dialer.DialContext))
}

// transport is the client's HTTP transport, dialing with dial.
func transport(o Options, dial func(ctx context.Context, network, addr string) (net.Conn, error)) *http.Transport {
	return &http.Transport{
		DialContext:            dial,
		MaxIdleConns:           10_000,
		MaxIdleConnsPerHost:    o.MaxIdlePerHost,
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    o.TLSHandshake,
		ResponseHeaderTimeout:  o.ResponseHeaders,
		MaxResponseHeaderBytes: o.MaxHeaderBytes,
		DisableCompression:     true, // decoded here, under the size cap
		ForceAttemptHTTP2:      true,
		TLSClientConfig:        &tls.Config{RootCAs: o.RootCAs},
		// HTTP/2's flow control lets a server fill this much per stream before the reader
		// takes it (Go's default: 4 MiB a stream, 1 GiB a connection), outside the body
		// budget: kept small, as the pages are read at once anyway.
		HTTP2: &http.HTTP2Config{MaxReceiveBufferPerStream: h2StreamWindow, MaxReceiveBufferPerConnection: 4 * h2StreamWindow},
	}
}

// h2StreamWindow is an HTTP/2 stream's receive window.
const h2StreamWindow = 256 << 10

// newClient builds the client over tr.
func newClient(o Options, tr *http.Transport) *Client {
	return &Client{
		opts: o,
		plain: &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		}},
	}
}

// Request is one GET.
type Request struct {
	URL          string
	UserAgent    string
	ETag         string // sent as If-None-Match
	LastModified string // sent as If-Modified-Since
	MaxBytes     int64  // decoded body cap
	Timeout      time.Duration
	// Proxy is the outbound proxy the request goes through (nil: direct). The address guard
	// still judges the target host, and the proxy itself is dialed as the operator named it.
	Proxy *url.URL
	// Cookies are sent with the request (the crawl's jar for its host, spec.cookies).
	Cookies []*http.Cookie
	// Header holds the crawl's own headers (its spec's, checked by crawl.CheckHeader): sent
	// with the request, an Accept among them replacing Trawler's.
	Header http.Header
	// RecordSecrets keeps the values of Header's names, Authorization and Cookie in
	// Response.RequestHead, and Set-Cookie in Response.ResponseHead; by default they read
	// Redacted there (never on the wire, nor in Response.Header, which the jar reads).
	RecordSecrets bool
	// Sent, if set, is called with the time the request was written to the connection: the
	// moment politeness is measured from, which a slow dial or a descheduled process can put
	// well after the slot the request was booked for.
	Sent func(at time.Time)
}

// Response is what came back. Body holds at most MaxBytes decoded bytes.
type Response struct {
	Status       int
	Header       http.Header
	Body         []byte
	Truncated    bool
	FinalURL     string
	Location     string        // resolved redirect target, for a 3xx
	RetryAfter   time.Duration // from Retry-After, for 429/503
	ContentType  string
	ETag         string
	LastModified string
	Started      time.Time
	Duration     time.Duration
	RequestHead  string // request line and headers as sent, CRLF-terminated (for WARC)
	ResponseHead string // status line and headers as received

	hold *membudget.Hold // Body's bytes in the client's budget
}

// Release gives the body's bytes back to the client's budget: call it once Body is no longer
// needed (recorded, or copied). Safe on a nil Response and more than once.
func (r *Response) Release() {
	if r != nil {
		r.hold.Release()
	}
}

// ErrTimeout marks a request cut by its total time limit.
var ErrTimeout = errors.New("request timed out")

// Get performs the request. A body cut by the size cap is not an error (Truncated is set); a
// body cut by the time limit or a connection reset is.
func (c *Client) Get(ctx context.Context, r Request) (resp *Response, err error) {
	if r.Timeout <= 0 {
		r.Timeout = 30 * time.Second
	}
	if r.MaxBytes <= 0 || r.MaxBytes > crawl.MaxBodyBytesCap {
		r.MaxBytes = min(max(r.MaxBytes, 10<<20), crawl.MaxBodyBytesCap)
	}
	// Room for the start of the body is waited for before the request is sent, and before
	// its time limit starts: a request held back by the budget is slowed, not timed out.
	hold, err := c.opts.Budget.Take(ctx, min(firstTake, r.MaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", r.URL, err)
	}
	defer func() { // (a panic in a decoder included: the budget never loses the bytes)
		if resp == nil {
			hold.Release()
		}
	}()
	return c.get(ctx, r, hold)
}

// firstTake is what a request takes from the budget before it is sent: most pages fit.
const firstTake = 64 << 10

// get performs the request, its body's bytes held in hold.
func (c *Client) get(ctx context.Context, r Request, hold *membudget.Hold) (*Response, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	dl := startDeadline(r.Timeout, cancel)
	defer dl.stop()
	if r.Sent != nil {
		ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { r.Sent(time.Now()) }})
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.URL, nil)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", r.URL, err)
	}
	for name, values := range r.Header {
		req.Header[name] = values
	}
	for _, ck := range r.Cookies {
		req.AddCookie(ck)
	}
	req.Header.Set("User-Agent", r.UserAgent)
	if req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,text/plain;q=0.8,*/*;q=0.5")
	}
	req.Header.Set("Accept-Encoding", "gzip, br, deflate")
	if r.ETag != "" {
		req.Header.Set("If-None-Match", r.ETag)
	}
	if r.LastModified != "" {
		req.Header.Set("If-Modified-Since", r.LastModified)
	}
	via := c
	if r.Proxy != nil {
		if via, err = c.through(r.Proxy); err != nil {
			return nil, fmt.Errorf("fetch %s: %w", r.URL, err)
		}
		if err := via.judge(req); err != nil {
			return nil, fmt.Errorf("fetch %s: %w", r.URL, err)
		}
	}
	start := time.Now()
	resp, err := via.plain.Do(req)
	if err != nil {
		return nil, c.wrap(ctx, r.URL, err)
	}
	defer resp.Body.Close()
	out := &Response{Status: resp.StatusCode, Header: resp.Header, FinalURL: resp.Request.URL.String(), Started: start,
		// What the server sends is capped here, where it enters the crawl's records: a
		// megabyte validator would come back in every heartbeat of its recrawl, and be sent back.
		ContentType: crawl.Clip(resp.Header.Get("Content-Type"), crawl.MaxFieldBytes),
		ETag:        crawl.Validator(resp.Header.Get("ETag")), LastModified: crawl.Validator(resp.Header.Get("Last-Modified")),
		RequestHead: requestHead(resp.Request, r), ResponseHead: responseHead(resp, r), hold: hold}
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		if loc, err := resp.Location(); err == nil {
			out.Location = loc.String()
		}
	}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		out.RetryAfter = ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	}
	// The heads (and the header map made of them) are held too: up to a megabyte each.
	heads := int64(2*len(out.ResponseHead) + len(out.RequestHead))
	if err := grow(ctx, dl, hold, heads); err != nil {
		return out, c.wrap(ctx, r.URL, err)
	}
	body, truncated, err := readBody(ctx, dl, resp, r.MaxBytes, hold)
	// The decoder is done: what the hold keeps is the body's buffer and the heads.
	hold.Shrink(int64(cap(body)) + heads)
	out.Body, out.Truncated, out.Duration = body, truncated, time.Since(start)
	if err != nil {
		return out, c.wrap(ctx, r.URL, err)
	}
	return out, nil
}

func (c *Client) wrap(ctx context.Context, u string, err error) error {
	if errors.Is(context.Cause(ctx), ErrTimeout) {
		return fmt.Errorf("fetch %s: %w", u, ErrTimeout)
	}
	return clipped{fmt.Errorf("fetch %s: %w", u, err)}
}

// clipped is an error whose text is capped (crawl.ClipError): Go's client quotes a malformed
// status line or header whole into its error, and a server can make that a megabyte. What it
// wraps stays for errors.Is and errors.As.
type clipped struct{ err error }

func (e clipped) Error() string { return crawl.ClipError(e.err.Error()) }
func (e clipped) Unwrap() error { return e.err }
