package testweb

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Server is a running test web.
type Server struct {
	Web  *Web
	Addr string // host:port it listens on, for http:// and https:// alike
	srv  *http.Server
	tls  *http.Server
	ca   *authority
	ln   net.Listener
}

// Start serves web on addr (use "127.0.0.1:0" for a free port). Only loopback addresses are
// accepted: the test web is never exposed.
func Start(web *Web, addr string) (*Server, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("testweb: address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("testweb: refusing to listen on %q: loopback only", addr)
	}
	ca, err := newAuthority()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("testweb: listen: %w", err)
	}
	split := newSplitListener(ln, &tls.Config{GetCertificate: ca.leaf, NextProtos: []string{"http/1.1"}})
	s := &Server{Web: web, Addr: ln.Addr().String(), ca: ca, ln: ln,
		srv: &http.Server{Handler: web, ReadHeaderTimeout: 10 * time.Second},
		tls: &http.Server{Handler: web, ReadHeaderTimeout: 10 * time.Second}}
	go func() { _ = s.srv.Serve(split.plain) }()
	go func() { _ = s.tls.Serve(split.tls) }()
	return s, nil
}

// CAPEM is the certificate (PEM) of the authority that signs the server's https:// answers:
// the crawler's TRAWLER_CA_FILE.
func (s *Server) CAPEM() []byte { return s.ca.pem }

// ConnectTo is the crawler's TRAWLER_CONNECT_TO value that reaches this server.
func (s *Server) ConnectTo() string { return "*.test=" + s.Addr }

// Close stops the server, cutting slow responses short.
func (s *Server) Close() error {
	_ = s.ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	var errs []error
	for _, srv := range []*http.Server{s.srv, s.tls} {
		if err := srv.Shutdown(ctx); err != nil {
			errs = append(errs, srv.Close())
		}
	}
	return errors.Join(errs...)
}
