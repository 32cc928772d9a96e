package store_test

import (
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/store"
)

// The robots.txt cache read says whether the host's dead-site clock runs (a lease that knows
// its host is healthy skips the write that would stop it), with or without a cached robots.txt.
func TestRobotsReadSaysWhetherTheHostIsFailing(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	if r, failing, err := s.HostRobotsAndHealth(ctx, "new.test"); err != nil || r != nil || failing {
		t.Fatalf("unknown host: %v %v %v", r, failing, err)
	}
	if _, _, err := s.Claim(ctx, "f.test", 1, time.Minute, time.Now()); err != nil { // (creates the host's row)
		t.Fatal(err)
	}
	for _, step := range []struct {
		name    string
		do      func() error
		failing bool
	}{
		{"no robots.txt yet", func() error { return nil }, false},
		{"failing", func() error { return s.HostFailing(ctx, "f.test", "dns") }, true},
		{"robots.txt cached", func() error {
			return s.SaveRobots(ctx, "f.test", store.Robots{Status: 200, Body: "User-agent: *\n", FetchedAt: time.Now(), ExpiresAt: time.Now().Add(time.Hour)}, 0)
		}, true},
		{"healthy again", func() error { return s.HostHealthy(ctx, "f.test") }, false},
	} {
		if err := step.do(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if _, failing, err := s.HostRobotsAndHealth(ctx, "f.test"); err != nil || failing != step.failing {
			t.Errorf("%s: failing %v (%v), want %v", step.name, failing, err, step.failing)
		}
	}
}
