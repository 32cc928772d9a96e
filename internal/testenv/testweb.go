package testenv

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/trawlerdev/trawler/internal/config"
	"github.com/trawlerdev/trawler/internal/testweb"
)

// TestWeb serves a test web built from cfg on a free loopback port until t ends, and returns
// it with the connect-to rules that route every *.test host to it.
func TestWeb(t testing.TB, cfg testweb.Config) (*testweb.Server, []config.ConnectRule) {
	t.Helper()
	web, err := testweb.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := testweb.Start(web, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	rules, err := config.ParseConnectTo(srv.ConnectTo())
	if err != nil {
		t.Fatal(err)
	}
	return srv, rules
}

// TrustTestWeb makes cfg's crawler trust the test web's https:// answers: the web's CA goes to a
// file (worker processes get it as TRAWLER_CA_FILE) and into cfg.
func TrustTestWeb(t testing.TB, cfg *config.Config, srv *testweb.Server) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "testweb-ca.pem")
	if err := os.WriteFile(path, srv.CAPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := cfg.TrustCAFile(path); err != nil {
		t.Fatal(err)
	}
}
