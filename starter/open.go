package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/client"

	"github.com/trawlerdev/trawler/internal/app"
	"github.com/trawlerdev/trawler/internal/blob"
	"github.com/trawlerdev/trawler/internal/config"
	"github.com/trawlerdev/trawler/internal/store"
)

// need says which services a command opens besides Postgres.
type need int

const (
	needBlob     need = 1 << iota // the bucket (bodies, texts, WARC files)
	needTemporal                  // the Temporal frontend
)

// opened is what a command that reads a crawl's results works with: Postgres and its store,
// and the bucket and Temporal when the command needs them. Close releases them.
type opened struct {
	cfg  *config.Config
	log  *slog.Logger
	db   *pgxpool.Pool
	st   *store.Store
	blob *blob.Store   // nil unless needBlob
	tc   client.Client // nil unless needTemporal
}

// open is the one opening of the commands that read or change stored crawls (export, warc,
// report, delete, dlq list, host --record): Postgres always, the rest as asked. With crawlID
// set, a crawl of that name must exist, so every command says "no crawl" the same way.
func open(ctx context.Context, cmd string, cfg *config.Config, crawlID string, n need) (*opened, error) {
	o := &opened{cfg: cfg, log: app.NewLogger(cfg)}
	db, err := app.OpenDB(ctx, cfg, o.log)
	if err != nil {
		return nil, err
	}
	o.db, o.st = db, store.New(db)
	if crawlID != "" {
		exists, _, err := o.st.Crawls().CrawlLive(ctx, crawlID)
		if err != nil {
			o.Close()
			return nil, fmt.Errorf("%s: %w", cmd, err)
		}
		if !exists {
			o.Close()
			return nil, fmt.Errorf("%s: no crawl %q", cmd, crawlID)
		}
	}
	if n&needBlob != 0 {
		if o.blob, err = app.OpenBlob(ctx, cfg); err != nil {
			o.Close()
			return nil, err
		}
	}
	if n&needTemporal != 0 {
		if o.tc, err = app.DialTemporal(ctx, cfg, o.log); err != nil {
			o.Close()
			return nil, fmt.Errorf("%s: %w", cmd, err)
		}
	}
	return o, nil
}

// Close releases what open opened.
func (o *opened) Close() {
	if o.tc != nil {
		o.tc.Close()
	}
	o.db.Close()
}
