// Package fetch owns the crawler's HTTP client: keep-alive pools per host, connect and total
// timeouts, compressed transfer (gzip, br, deflate) decoded under a size cap so a compression
// bomb is cut short, a cap on the bytes read (truncated and marked), conditional requests,
// Retry-After parsing, and redirects handed back to the caller: each hop is a request of its
// own, judged and politeness-scheduled by the caller (robots.txt's hops too: fetching).
package fetch

import (
	"bufio"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/andybalholm/brotli"

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
	if errors.Is(context.Cause(ctx), errTimedOut) {
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

// readBody decodes the transfer and reads at most max bytes of the decoded body (and at most
// max bytes off the wire), growing hold with the memory it takes.
func readBody(ctx context.Context, dl *deadline, resp *http.Response, max int64, hold *membudget.Hold) ([]byte, bool, error) {
	taken := hold.Bytes() // what the request took before it was sent: the buffer's start
	wire := &countingReader{r: io.LimitReader(resp.Body, max+1)}
	var dec io.Reader = wire
	hint := int64(-1) // the decoded length, where the header says it
	switch strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding"))) {
	case "", "identity":
		hint = resp.ContentLength
	case "gzip", "x-gzip":
		if err := grow(ctx, dl, hold, flateState); err != nil {
			return nil, false, err
		}
		zr, err := gzip.NewReader(wire)
		if err != nil {
			return nil, false, fmt.Errorf("gzip body: %w", err)
		}
		defer zr.Close()
		dec = zr
	case "br":
		// A brotli decoder keeps a window of up to 16 MiB, as the stream's header asks, and
		// Huffman tables of up to a few MiB: held in the budget like the body (until the body
		// is read), so a thousand small answers cannot ask for 16 GiB. No body: no decoder.
		br := bufio.NewReader(wire)
		if head, _ := br.Peek(1); len(head) > 0 {
			if err := grow(ctx, dl, hold, brotliWindow(head)+brotliTables); err != nil {
				return nil, false, err
			}
		}
		dec = brotli.NewReader(br)
	case "deflate":
		// HTTP's deflate is the zlib format (RFC 9110 §8.4.1.2); many servers send raw
		// deflate under the same name. The zlib header tells them apart.
		if err := grow(ctx, dl, hold, flateState); err != nil {
			return nil, false, err
		}
		br := bufio.NewReader(wire)
		if head, _ := br.Peek(2); len(head) == 2 && head[0]&0x0f == 8 && (uint16(head[0])<<8|uint16(head[1]))%31 == 0 {
			zr, err := zlib.NewReader(br)
			if err != nil {
				return nil, false, fmt.Errorf("deflate (zlib) body: %w", err)
			}
			defer zr.Close()
			dec = zr
		} else {
			fr := flate.NewReader(br)
			defer fr.Close()
			dec = fr
		}
	default:
		return nil, false, fmt.Errorf("unsupported Content-Encoding %q", resp.Header.Get("Content-Encoding"))
	}
	body, err := readAll(ctx, dl, dec, max+1, hint, hold, taken)
	truncated := int64(len(body)) > max || wire.n > max
	if int64(len(body)) > max {
		body = body[:max]
	}
	if err != nil && !(truncated && (errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF))) {
		return body, truncated, err
	}
	return body, truncated, nil
}

// readAll reads r to its end or limit bytes, into a buffer sized by hint (the length the
// server announced, -1 if none) and doubled as it fills. hold grows before the buffer does,
// so that what it holds covers the buffer's capacity; taken bytes of it are the buffer's
// already.
func readAll(ctx context.Context, dl *deadline, r io.Reader, limit, hint int64, hold *membudget.Hold, taken int64) ([]byte, error) {
	size := int64(512)
	if hint >= 0 {
		// +1: the read that finds the end needs room. At most presizeMost on the server's
		// word: a length it announces and does not send must not hold the budget.
		size = min(hint+1, presizeMost)
	}
	size = min(max(size, 512), limit)
	if err := grow(ctx, dl, hold, size-taken); err != nil {
		return nil, err
	}
	held := max(size, taken)
	buf := make([]byte, 0, size)
	for {
		if int64(len(buf)) >= limit {
			return buf, nil
		}
		if len(buf) == cap(buf) {
			next := min(int64(cap(buf))*2, limit)
			if err := grow(ctx, dl, hold, next-held); err != nil {
				return buf, err
			}
			held = max(held, next)
			grown := make([]byte, len(buf), next)
			copy(grown, buf)
			buf = grown
		}
		n, err := r.Read(buf[len(buf):min(int64(cap(buf)), limit)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// h2StreamWindow is an HTTP/2 stream's receive window.
const h2StreamWindow = 256 << 10

// presizeMost is the most a body's buffer is sized at on the strength of its Content-Length
// alone; past it the buffer grows as bytes arrive.
const presizeMost = 1 << 20

// flateState is what a gzip, zlib or raw deflate reader holds: its 32 KiB window, tables and
// buffers.
const flateState = 64 << 10

// brotliTables bounds what a brotli decoder holds besides its window: the Huffman tables a
// stream may ask for (up to 256 trees in each of three groups) and its buffers.
const brotliTables = 3 << 20

// grow grows hold by n bytes with the request's clock stopped: a wait for room in the
// worker's budget is not the site's slowness.
func grow(ctx context.Context, dl *deadline, hold *membudget.Hold, n int64) error {
	if n <= 0 || hold == nil {
		return nil
	}
	dl.pause()
	defer dl.resume()
	return hold.Grow(ctx, n)
}

// brotliWindow is the decoding window a brotli stream's first byte declares (RFC 7932 §9.1):
// 2^WBITS bytes, at most 16 MiB. Its reading needs up to 7 bits; a stream whose first byte
// is missing, or that asks for a large window, is held at the most.
func brotliWindow(head []byte) int64 {
	const most = 1 << 24
	if len(head) == 0 {
		return most
	}
	b := head[0]
	switch {
	case b&1 == 0:
		return 1 << 16
	case (b>>1)&7 != 0:
		return 1 << (17 + (b>>1)&7)
	case (b>>4)&7 == 0:
		return 1 << 17
	case (b>>4)&7 == 1:
		return most // a large window, which the decoder refuses anyway
	default:
		return 1 << (8 + (b>>4)&7)
	}
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

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
