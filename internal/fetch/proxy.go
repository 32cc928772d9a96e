package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"

	"golang.org/x/net/proxy"

	"github.com/trawlerdev/trawler/internal/netguard"
)

// A crawl may send its requests through an outbound proxy (spec.proxy, or the worker's
// TRAWLER_PROXY): an HTTP(S) proxy, or SOCKS5. The proxy, not this process, then connects to
// the target, so the address guard cannot judge the dial: it judges the target host before
// the request is sent, as it would judge the dial.

// proxyConnectTimeout bounds connecting to the proxy itself.
const proxyConnectTimeout = 10 * time.Second

// through is the client that sends requests through the proxy p, built once per proxy.
func (c *Client) through(p *url.URL) (*Client, error) {
	key := p.String()
	c.mu.Lock()
	defer c.mu.Unlock()
	if pc, ok := c.proxied[key]; ok {
		return pc, nil
	}
	// The worker's own proxy (TRAWLER_PROXY) is the operator's: dialed as named. One a crawl's
	// spec names is dialed through the guard like any target, so a spec cannot point the
	// worker at an internal service that answers as a "proxy" (a private proxy must be the
	// worker's, or within TRAWLER_ALLOW_NETWORKS).
	var dial func(ctx context.Context, network, addr string) (net.Conn, error)
	if c.opts.TrustedProxy != "" && key == c.opts.TrustedProxy {
		dial = (&net.Dialer{Timeout: proxyConnectTimeout}).DialContext
	} else {
		dial = c.opts.Dialer.DialContext
	}
	dial = proxyDial(p.Redacted(), dial)
	var tr *http.Transport
	switch p.Scheme {
	case "http", "https":
		tr = transport(c.opts, dial)
		tr.Proxy = http.ProxyURL(p)
	case "socks5", "socks5h":
		var auth *proxy.Auth
		if u := p.User; u != nil {
			pw, _ := u.Password()
			auth = &proxy.Auth{User: u.Username(), Password: pw}
		}
		d, err := proxy.SOCKS5("tcp", p.Host, auth, dialerFunc(dial))
		if err != nil {
			return nil, fmt.Errorf("proxy %s: %w", p.Redacted(), err)
		}
		cd, ok := d.(proxy.ContextDialer)
		if !ok {
			return nil, fmt.Errorf("proxy %s: no context dialer", p.Redacted())
		}
		tr = transport(c.opts, cd.DialContext)
	default:
		return nil, fmt.Errorf("proxy %s: the scheme must be http, https or socks5", p.Redacted())
	}
	pc := newClient(c.opts, tr) // (the same options: the same guard)
	if c.proxied == nil {
		c.proxied = map[string]*Client{}
	}
	c.proxied[key] = pc
	return pc, nil
}

// ErrProxy says a request failed at the crawl's proxy (unreachable, or refused by the address
// guard), not at its target: a network error of the request, which counts toward its dead
// letter, never a verdict on the target host (not "blocked address", not its robots.txt).
var ErrProxy = errors.New("proxy unreachable")

// ProxyError is a failed dial of a proxy. It is ErrProxy and nothing else to errors.Is: a
// refusal by the guard or a missing DNS name is the proxy's, not the target's.
type ProxyError struct {
	Proxy string // redacted: no credentials
	Err   error
}

func (e *ProxyError) Error() string        { return "proxy " + e.Proxy + ": " + e.Err.Error() }
func (e *ProxyError) Is(target error) bool { return target == ErrProxy }

// proxyDial marks the errors of dialing the proxy as ProxyError.
func proxyDial(proxy string, dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		if err != nil {
			return nil, &ProxyError{Proxy: proxy, Err: err}
		}
		return conn, nil
	}
}

// dialerFunc makes a dial function a proxy.Dialer for the SOCKS5 client.
type dialerFunc func(ctx context.Context, network, addr string) (net.Conn, error)

func (f dialerFunc) Dial(network, addr string) (net.Conn, error) {
	return f(context.Background(), network, addr)
}

func (f dialerFunc) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	return f(ctx, network, addr)
}

// judge refuses a request for a target the guard would not let a proxy reach
// (netguard.RefusesBehindProxy: a forbidden address among its own, an internal name).
func (c *Client) judge(req *http.Request) error {
	if why := c.opts.Dialer.RefusesBehindProxy(req.Context(), req.URL.Hostname()); why != "" {
		return fmt.Errorf("%s (%s) through a proxy: %w", req.URL.Hostname(), why, netguard.ErrBlocked)
	}
	return nil
}
