package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/trawlerdev/trawler/internal/admit"
	"github.com/trawlerdev/trawler/internal/api"
	"github.com/trawlerdev/trawler/internal/app"
	"github.com/trawlerdev/trawler/internal/config"
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
	ln, err := listenGuarded("serve", cfg.APIAddr, cfg.APIToken)
	if err != nil {
		return err
	}
	log.Info("serving the HTTP API", "url", "http://"+ln.Addr().String()+"/api/v1/stats", "auth", cfg.APIToken != "")
	fmt.Fprintf(stdout, "listening on http://%s\n", ln.Addr())
	return serveUntil(ctx, "serve", ln, srv.Handler())
}
