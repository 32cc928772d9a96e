package store_test

import (
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/store"
)

// make demo forgets the test web's cached robots.txt with one statement in scripts/demo.sh.
// It runs here against the schema as it is: when a migration moves the cache, this fails
// instead of the demo quietly auditing a crawl that used an old robots.txt.
func TestDemoForgetsCachedRobots(t *testing.T) {
	raw, err := os.ReadFile("../../scripts/demo.sh")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^forget_robots="([^"]+)"$`).FindSubmatch(raw)
	if m == nil {
		t.Fatal(`scripts/demo.sh has no forget_robots="…" statement`)
	}
	s, ctx := newStore(t, 0, 0)
	for _, scheme := range []string{"http", "https"} {
		if err := s.Hosts().SaveRobots(ctx, "h0000.test", scheme, store.Robots{Status: 200, Body: "User-agent: *\n", FetchedAt: time.Now(),
			ExpiresAt: time.Now().Add(24 * time.Hour)}, 0); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Pool().Exec(ctx, string(m[1])); err != nil {
		t.Fatalf("demo.sh's %q: %v", m[1], err)
	}
	for _, scheme := range []string{"http", "https"} {
		r, err := s.Hosts().HostRobots(ctx, "h0000.test", scheme)
		if err != nil {
			t.Fatal(err)
		}
		if r != nil && r.ExpiresAt.After(time.Now()) {
			t.Errorf("%s robots.txt still cached until %s after the demo's statement", scheme, r.ExpiresAt)
		}
	}
}
