package store_test

import (
	"strings"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/store"
)

// The robots.txt cache read says whether the host's dead-site clock runs (a lease that knows
// its host is healthy skips the write that would stop it), with or without a cached robots.txt.
func TestRobotsReadSaysWhetherTheHostIsFailing(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	if r, failing, err := s.Hosts().HostRobotsAndHealth(ctx, "new.test", "http"); err != nil || r != nil || failing {
		t.Fatalf("unknown host: %v %v %v", r, failing, err)
	}
	if _, _, err := s.Frontier().Claim(ctx, "f.test", 1, time.Minute, time.Now()); err != nil { // (creates the host's row)
		t.Fatal(err)
	}
	for _, step := range []struct {
		name    string
		do      func() error
		failing bool
	}{
		{"no robots.txt yet", func() error { return nil }, false},
		{"failing", func() error { return s.Hosts().HostFailing(ctx, "f.test", "dns") }, true},
		{"robots.txt cached", func() error {
			return s.Hosts().SaveRobots(ctx, "f.test", "http", store.Robots{Status: 200, Body: "User-agent: *\n", FetchedAt: time.Now(), ExpiresAt: time.Now().Add(time.Hour)}, 0)
		}, true},
		{"healthy again", func() error { return s.Hosts().HostHealthy(ctx, "f.test") }, false},
	} {
		if err := step.do(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if _, failing, err := s.Hosts().HostRobotsAndHealth(ctx, "f.test", "https"); err != nil || failing != step.failing {
			t.Errorf("%s: failing %v (%v), want %v", step.name, failing, err, step.failing)
		}
	}
}

// robots.txt is cached per scheme (RFC 9309 §2.3): http:// and https:// of one host keep their
// own files, and the host's crawl-delay is the larger of the two, whichever was saved last.
func TestRobotsAreCachedPerScheme(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	now := time.Now()
	save := func(scheme, body string, delay time.Duration) {
		t.Helper()
		if err := s.Hosts().SaveRobots(ctx, "s.test", scheme, store.Robots{Status: 200, Body: body, FetchedAt: now, ExpiresAt: now.Add(time.Hour)}, delay); err != nil {
			t.Fatal(err)
		}
	}
	save("https", "User-agent: *\nDisallow: /secure/\n", 5*time.Second)
	if r, _ := s.Hosts().HostRobots(ctx, "s.test", "http"); r != nil {
		t.Fatalf("https's robots.txt answered for http: %+v", r)
	}
	save("http", "User-agent: *\nDisallow: /plain/\n", 2*time.Second)
	for scheme, want := range map[string]string{"http": "/plain/", "https": "/secure/"} {
		r, err := s.Hosts().HostRobots(ctx, "s.test", scheme)
		if err != nil || r == nil || !strings.Contains(r.Body, want) {
			t.Errorf("%s: %+v %v, want the file disallowing %s", scheme, r, err, want)
		}
	}
	rec, err := s.Inspect().HostRecordOf(ctx, "s.test")
	if err != nil {
		t.Fatal(err)
	}
	if rec.CrawlDelayMs == nil || *rec.CrawlDelayMs != 5000 || len(rec.Robots) != 2 || rec.Robots[0].Scheme != "http" {
		t.Errorf("host record: delay %v, robots %+v; want 5000 ms and both schemes", rec.CrawlDelayMs, rec.Robots)
	}
	save("https", "User-agent: *\n", 0)
	if rec, _ = s.Inspect().HostRecordOf(ctx, "s.test"); rec.CrawlDelayMs == nil || *rec.CrawlDelayMs != 2000 {
		t.Errorf("after https dropped its delay: %v, want http's 2000 ms", rec.CrawlDelayMs)
	}
}
