package fetch

import (
	"context"
	"errors"
	"net/http"
	"runtime"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/netguard"
	"github.com/trawlerdev/trawler/internal/testenv"
	"github.com/trawlerdev/trawler/internal/testweb"
)

func testClient(t *testing.T) *Client {
	t.Helper()
	cfg := testweb.DefaultConfig()
	cfg.RetryAfter = 2 * time.Second
	_, rules := testenv.TestWeb(t, cfg)
	return New(Options{Dialer: netguard.New(netguard.Options{ConnectTo: rules})})
}

func TestHostileResponsesAreCapped(t *testing.T) {
	c := testClient(t)
	ctx := context.Background()
	get := func(path string, max int64, timeout time.Duration) (*Response, error) {
		return c.Get(ctx, Request{URL: "http://hostile.test" + path, UserAgent: "TrawlerBot/test", MaxBytes: max, Timeout: timeout})
	}
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	r, err := get("/bomb", 5<<20, 20*time.Second)
	if err != nil || !r.Truncated || len(r.Body) != 5<<20 {
		t.Fatalf("bomb: err %v truncated %v len %d", err, r != nil && r.Truncated, len(r.Body))
	}
	r, err = get("/large", 1<<20, 20*time.Second)
	if err != nil || !r.Truncated || len(r.Body) != 1<<20 {
		t.Fatalf("large: %v %v %d", err, r.Truncated, len(r.Body))
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 64<<20 {
		t.Errorf("heap grew %d MiB fetching capped bodies", grew>>20)
	}
	start := time.Now()
	if _, err := get("/drip", 1<<20, time.Second); !errors.Is(err, ErrTimeout) || time.Since(start) > 3*time.Second {
		t.Errorf("drip: %v after %v; want ErrTimeout after ~1s", err, time.Since(start))
	}
	if _, err := get("/reset", 1<<20, 5*time.Second); err == nil {
		t.Error("reset: no error")
	}
	if r, err := get("/many-headers", 1<<20, 5*time.Second); err != nil || r.Status != 200 {
		t.Errorf("many headers: %v", err)
	}
}

func TestRedirectsConditionalAndRetryAfter(t *testing.T) {
	c := testClient(t)
	ctx := context.Background()
	r, err := c.Get(ctx, Request{URL: "http://redirect.test/chain/3", UserAgent: "TrawlerBot/test"})
	if err != nil || r.Status != http.StatusMovedPermanently || r.Location != "http://redirect.test/chain/2" {
		t.Fatalf("redirect handed back: %v %+v", err, r)
	}
	r, err = c.Get(ctx, Request{URL: "http://h0006.test/robots.txt", UserAgent: "TrawlerBot/test"})
	if err != nil || r.Status != http.StatusMovedPermanently || r.Location != "http://h0006.test/robots-moved.txt" {
		t.Fatalf("robots.txt's redirect handed back too (its hops are judged and paced by fetching): %v %+v", err, r)
	}
	before := time.Now()
	var sent []time.Time
	r, _ = c.Get(ctx, Request{URL: "http://etag.test/stable/2", UserAgent: "TrawlerBot/test", Sent: func(at time.Time) { sent = append(sent, at) }})
	if len(sent) != 1 || sent[0].Before(before) || sent[0].After(r.Started.Add(r.Duration)) {
		t.Fatalf("sent hook: %v, request %v+%v", sent, r.Started, r.Duration)
	}
	r2, err := c.Get(ctx, Request{URL: "http://etag.test/stable/2", UserAgent: "TrawlerBot/test", ETag: r.ETag, LastModified: r.LastModified})
	if err != nil || r2.Status != http.StatusNotModified {
		t.Fatalf("conditional: %v %d", err, r2.Status)
	}
	r, err = c.Get(ctx, Request{URL: "http://retry.test/busy/1", UserAgent: "TrawlerBot/test"})
	if err != nil || r.Status != 429 || r.RetryAfter != 2*time.Second {
		t.Fatalf("retry-after seconds: %v %+v", err, r)
	}
	r, err = c.Get(ctx, Request{URL: "http://retry.test/unavailable/1", UserAgent: "TrawlerBot/test"})
	if err != nil || r.Status != 503 || r.RetryAfter < time.Second || r.RetryAfter > 4*time.Second {
		t.Fatalf("retry-after date: %v %+v", err, r.RetryAfter)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Duration{
		"120": 2 * time.Minute, "0": 0, "-5": 0, "soon": 0, "": 0,
		"Sun, 22 Nov 2026 00:01:00 GMT": time.Minute, "Sat, 21 Nov 2026 00:00:00 GMT": 0,
	} {
		if got := ParseRetryAfter(in, now); got != want {
			t.Errorf("ParseRetryAfter(%q) = %v, want %v", in, got, want)
		}
	}
}
