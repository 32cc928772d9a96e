package testweb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// ProxyVia is what the test proxy adds to the Via header of every request it forwards: the
// audit marks such requests (Request.Proxied).
const ProxyVia = "1.1 trawler-testproxy"

// Proxy is a forwarding HTTP proxy on loopback, for crawls that go through an outbound proxy:
// it sends every request for an absolute URL to the test web, whatever host it names (as a
// corporate egress proxy would to the internet), marked with Via, and counts them. It
// forwards plain http only (no CONNECT).
type Proxy struct {
	ln        net.Listener
	srv       *http.Server
	forwarded atomic.Int64
}

// StartProxy starts a proxy on a loopback address in front of the test web at webAddr.
func StartProxy(webAddr string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("testweb proxy: %w", err)
	}
	p := &Proxy{ln: ln}
	tr := &http.Transport{DisableCompression: true, DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, network, webAddr)
	}}
	p.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { p.forward(w, r, tr) }),
		ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

// URL is the proxy's address as a crawl names it.
func (p *Proxy) URL() string { return "http://" + p.ln.Addr().String() }

// Forwarded is how many requests the proxy forwarded.
func (p *Proxy) Forwarded() int64 { return p.forwarded.Load() }

// Close stops the proxy.
func (p *Proxy) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := p.srv.Shutdown(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

func (p *Proxy) forward(w http.ResponseWriter, r *http.Request, tr *http.Transport) {
	if r.Method == http.MethodConnect || !r.URL.IsAbs() || r.URL.Scheme != "http" {
		http.Error(w, "the test proxy forwards plain http requests for absolute URLs only", http.StatusBadRequest)
		return
	}
	out := r.Clone(r.Context())
	out.RequestURI = ""
	out.Host = r.URL.Host
	for _, h := range []string{"Proxy-Connection", "Proxy-Authorization", "Connection", "Keep-Alive"} {
		out.Header.Del(h)
	}
	out.Header.Add("Via", ProxyVia)
	p.forwarded.Add(1)
	resp, err := tr.RoundTrip(out)
	if err != nil {
		http.Error(w, "test proxy: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, vs := range resp.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}
