// Command testweb serves Trawler's synthetic multi-host web on a loopback address, for demos,
// benchmarks and manual testing:
//
//	go run ./testweb --hosts 2000 --pages 50
//	TRAWLER_CONNECT_TO='*.test=127.0.0.1:18080' trawler crawl --seeds http://h0000.test/
//	curl -H 'Host: control.test' http://127.0.0.1:18080/audit
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/trawlerdev/trawler/internal/testweb"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "testweb:", err)
		os.Exit(1)
	}
}

func run() error {
	cfg := testweb.DefaultConfig()
	fs := flag.NewFlagSet("testweb", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:18080", "loopback address to listen on")
	fs.IntVar(&cfg.Hosts, "hosts", cfg.Hosts, "generic hosts (h0000.test, …)")
	fs.IntVar(&cfg.Pages, "pages", cfg.Pages, "pages per generic host")
	fs.BoolVar(&cfg.LongTail, "long-tail", cfg.LongTail, "size hosts like the web's (70% with 1–5 pages, 25% 6–200, 5% 1,000–2,000); --pages is ignored")
	fs.IntVar(&cfg.SeedEvery, "seed-every", cfg.SeedEvery, "seed every Nth host's front page (0: h0000's only)")
	fs.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed of the link graph and the text")
	fs.BoolVar(&cfg.Specials, "specials", cfg.Specials, "serve the special hosts (trap.test, redirect.test, …)")
	fs.BoolVar(&cfg.Bytes, "bytes", cfg.Bytes, "serve bytes.test (legacy charsets, header bytes >= 0x80, a sitemap in pieces behind a redirect); seed it")
	fs.BoolVar(&cfg.Formats, "formats", cfg.Formats, "serve formats.test (PDF, RSS/Atom, text/plain, lying Content-Types, hostile PDFs); seed it")
	fs.BoolVar(&cfg.Scripts, "scripts", cfg.Scripts, "serve js.test (links only its scripts add, a third-party and a forbidden script) and tracker.test; seed js.test")
	fs.BoolVar(&cfg.Signals, "signals", cfg.Signals, "serve signals.test (a robots.txt per scheme, X-Robots-Tag, meta robots); seed it")
	caFile := fs.String("ca-file", filepath.Join(os.TempDir(), "trawler-testweb-ca.pem"), "where to write the CA that signs the https:// answers (the crawler's TRAWLER_CA_FILE)")
	fs.StringVar(&cfg.ProductToken, "product-token", cfg.ProductToken, "the crawler's robots.txt product token")
	fs.DurationVar(&cfg.DefaultDelay, "delay", cfg.DefaultDelay, "required gap between request starts where robots.txt sets none (0: no requirement)")
	fs.DurationVar(&cfg.Tolerance, "tolerance", cfg.Tolerance, "slack on gaps and Retry-After")
	fs.IntVar(&cfg.MaxInFlight, "max-in-flight", cfg.MaxInFlight, "allowed concurrent requests per host")
	fs.DurationVar(&cfg.SlowRobots, "slow-robots", cfg.SlowRobots, "how long the slow robots.txt profile takes")
	fs.DurationVar(&cfg.PageLatency, "page-latency", cfg.PageLatency, "how long generic pages take to answer")
	fs.DurationVar(&cfg.RetryAfter, "retry-after", cfg.RetryAfter, "Retry-After that retry.test asks for")
	fs.DurationVar(&cfg.ChangePeriod, "change-period", cfg.ChangePeriod, "how often etag.test's changing pages change")
	fs.IntVar(&cfg.RingSize, "ring", cfg.RingSize, "recent requests kept for /requests")
	if err := fs.Parse(os.Args[1:]); err != nil {
		return err
	}
	if cfg.ChangePeriod <= 0 {
		return fmt.Errorf("--change-period must be positive")
	}
	web, err := testweb.New(cfg)
	if err != nil {
		return err
	}
	srv, err := testweb.Start(web, *addr)
	if err != nil {
		return err
	}
	if err := os.WriteFile(*caFile, srv.CAPEM(), 0o644); err != nil {
		_ = srv.Close()
		return fmt.Errorf("write the CA: %w", err)
	}
	fmt.Printf("testweb: %d hosts on http:// and https://%s\n", len(web.Hosts()), srv.Addr)
	fmt.Printf("  crawler option: TRAWLER_CONNECT_TO='%s'\n", srv.ConnectTo())
	fmt.Printf("  crawler option: TRAWLER_CA_FILE=%s (for https://)\n", *caFile)
	fmt.Printf("  seeds:          %s (%d in all: /truth lists them)\n", web.Seeds()[0], len(web.Seeds()))
	fmt.Printf("  audit:          curl -H 'Host: %s' http://%s/audit\n", testweb.ControlHost, srv.Addr)
	fmt.Printf("  truth:          curl -H 'Host: %s' http://%s/truth\n", testweb.ControlHost, srv.Addr)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	return srv.Close()
}
