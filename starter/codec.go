package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/trawlerdev/trawler/internal/app"
	"github.com/trawlerdev/trawler/internal/codec"
	"github.com/trawlerdev/trawler/internal/config"
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
	// Whoever reaches it reads every payload: beyond this machine only with a token.
	ln, err := listenGuarded("codec-server", cfg.CodecAddr, cfg.APIToken)
	if err != nil {
		return err
	}
	app.NewLogger(cfg).Info("serving the payload codec", "url", "http://"+ln.Addr().String(), "key", c.KeyID(), "origins", cfg.CodecOrigins, "auth", cfg.APIToken != "")
	fmt.Fprintf(stdout, "codec endpoint http://%s (key %s): temporal ... --codec-endpoint http://%s, or the UI's codec server setting\n", ln.Addr(), c.KeyID(), ln.Addr())
	return serveUntil(ctx, "codec-server", ln, c.Handler(cfg.CodecOrigins, cfg.APIToken))
}
