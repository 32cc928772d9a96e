package app_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/app"
	"github.com/trawlerdev/trawler/internal/config"
	"github.com/trawlerdev/trawler/internal/testenv"
)

// A process's Postgres pool is bounded by the setting, not by the machine's cores: what an
// operator budgets max_connections with.
func TestPostgresPoolFollowsTheSetting(t *testing.T) {
	_, url := testenv.Postgres(t)
	for _, want := range []int32{3, 7} {
		env := map[string]string{"DATABASE_URL": url, "TRAWLER_PG_MAX_CONNS": strconv.Itoa(int(want))}
		cfg, err := config.Load(nil, nil, func(k string) string { return env[k] })
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		pool, err := app.OpenDB(ctx, cfg, testenv.Logger(t))
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if got := pool.Config().MaxConns; got != want {
			t.Errorf("TRAWLER_PG_MAX_CONNS=%d: the pool holds up to %d connections", want, got)
		}
		pool.Close()
	}
	if _, err := config.Load(nil, nil, func(k string) string {
		return map[string]string{"TRAWLER_PG_MAX_CONNS": "0"}[k]
	}); err == nil {
		t.Error("TRAWLER_PG_MAX_CONNS=0 was accepted")
	}
}

// TEMPORAL_ADDRESS may list a cluster's frontends: calls go to those that answer, here past an
// address nothing listens on.
func TestAFrontendListSkipsAFrontendThatIsDown(t *testing.T) {
	cfg := testenv.Config(t)
	dead := testenv.FreeAddr(t)
	cfg.TemporalAddress = dead + "," + cfg.TemporalAddress + "," + dead
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := app.DialTemporal(ctx, cfg, testenv.Logger(t))
	if err != nil {
		t.Fatalf("dial %s: %v", cfg.TemporalAddress, err)
	}
	defer c.Close()
	for i := range 10 { // round robin: every call would meet a dead frontend in turn
		if _, err := c.CheckHealth(ctx, nil); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
}
