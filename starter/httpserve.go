package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/trawlerdev/trawler/internal/listen"
)

// listenGuarded listens on addr for command cmd; without a token, only on loopback: whoever
// reaches the server reads what it serves.
func listenGuarded(cmd, addr, token string) (net.Listener, error) {
	ln, err := listen.TCP(addr)
	if err != nil {
		return nil, fmt.Errorf("%s: listen on %s: %w", cmd, addr, err)
	}
	if token == "" && !listen.IsLoopbackHost(ln.Addr().String()) {
		_ = ln.Close()
		return nil, fmt.Errorf("%s: %s is reachable beyond this machine: set TRAWLER_API_TOKEN (clients send Authorization: Bearer <token>) or listen on 127.0.0.1", cmd, addr)
	}
	return ln, nil
}

// serveUntil serves h on ln until ctx ends, then shuts down within 5 s.
func serveUntil(ctx context.Context, cmd string, ln net.Listener, h http.Handler) error {
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, WriteTimeout: time.Minute}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
	}()
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	return nil
}
