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

	"github.com/trawlerdev/trawler/internal/admit"
	"github.com/trawlerdev/trawler/internal/api"
	"github.com/trawlerdev/trawler/internal/app"
	"github.com/trawlerdev/trawler/internal/config"
	"github.com/trawlerdev/trawler/internal/listen"
	"github.com/trawlerdev/trawler/internal/store"
)

// runServe serves the HTTP API until interrupted.
func runServe(ctx context.Context, args []string, stdout io.Writer) error {
	cfg, err := config.Load(flag.NewFlagSet("trawler serve", flag.ContinueOnError), args, os.Getenv)
	if err != nil {
		return err
	}
	if cfg.APIAddr == "" {
		return errors.New("serve: TRAWLER_API_ADDR is off")
	}
	log := app.NewLogger(cfg)
	db, err := app.OpenDB(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer db.Close()
	tc, err := app.DialTemporal(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer tc.Close()
	st := store.New(db)
	srv := &api.Server{Store: st, Temporal: tc, Admission: admit.New(tc, cfg, st, nil),
		Norm:     cfg.Normalizer(),
		IDPrefix: cfg.IDPrefix, TaskQueue: cfg.TaskQueue, UserAgent: cfg.UserAgent, Token: cfg.APIToken, Log: log}
	ln, err := listen.TCP(cfg.APIAddr)
	if err != nil {
		return fmt.Errorf("serve: listen on %s: %w", cfg.APIAddr, err)
	}
	if cfg.APIToken == "" && !api.IsLoopbackHost(ln.Addr().String()) {
		_ = ln.Close()
		return fmt.Errorf("serve: %s is reachable beyond this machine: set TRAWLER_API_TOKEN (clients send Authorization: Bearer <token>) or listen on 127.0.0.1", cfg.APIAddr)
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, WriteTimeout: time.Minute}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
	}()
	log.Info("serving the HTTP API", "url", "http://"+ln.Addr().String()+"/api/v1/stats", "auth", cfg.APIToken != "")
	fmt.Fprintf(stdout, "listening on http://%s\n", ln.Addr())
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}
