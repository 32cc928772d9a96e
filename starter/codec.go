package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/trawlerdev/trawler/internal/api"
	"github.com/trawlerdev/trawler/internal/app"
	"github.com/trawlerdev/trawler/internal/codec"
	"github.com/trawlerdev/trawler/internal/config"
	"github.com/trawlerdev/trawler/internal/listen"
)

// runCodecServer decodes sealed payloads (TRAWLER_PAYLOAD_KEY) for the Temporal UI and the
// temporal CLI until interrupted.
func runCodecServer(ctx context.Context, args []string, stdout io.Writer) error {
	cfg, err := config.Load(flag.NewFlagSet("trawler codec-server", flag.ContinueOnError), args, os.Getenv)
	if err != nil {
		return err
	}
	if cfg.PayloadKey == "" {
		return errors.New("codec-server: TRAWLER_PAYLOAD_KEY (or _FILE) is not set: there is nothing to decode")
	}
	if cfg.CodecAddr == "" {
		return errors.New("codec-server: TRAWLER_CODEC_ADDR is off")
	}
	c, err := codec.New(cfg.PayloadKey)
	if err != nil {
		return err
	}
	ln, err := listen.TCP(cfg.CodecAddr)
	if err != nil {
		return fmt.Errorf("codec-server: listen on %s: %w", cfg.CodecAddr, err)
	}
	// Whoever reaches it reads every payload: beyond this machine only with a token.
	if cfg.APIToken == "" && !api.IsLoopbackHost(ln.Addr().String()) {
		_ = ln.Close()
		return fmt.Errorf("codec-server: %s is reachable beyond this machine: set TRAWLER_API_TOKEN (clients send Authorization: Bearer <token>) or listen on 127.0.0.1", cfg.CodecAddr)
	}
	hs := &http.Server{Handler: c.Handler(cfg.CodecOrigins, cfg.APIToken), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, WriteTimeout: time.Minute}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
	}()
	app.NewLogger(cfg).Info("serving the payload codec", "url", "http://"+ln.Addr().String(), "key", c.KeyID(), "origins", cfg.CodecOrigins, "auth", cfg.APIToken != "")
	fmt.Fprintf(stdout, "codec endpoint http://%s (key %s): temporal ... --codec-endpoint http://%s, or the UI's codec server setting\n", ln.Addr(), c.KeyID(), ln.Addr())
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("codec-server: %w", err)
	}
	return nil
}
