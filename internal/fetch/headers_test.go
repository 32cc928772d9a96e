package fetch

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/config"
	"github.com/trawlerdev/trawler/internal/netguard"
)

// A crawl's own headers go to the host it asked; when robots.txt redirects to another host,
// they stay behind (an API key is for the site that asked for it), an Accept aside.
func TestOwnHeadersStayWithTheirHost(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]http.Header{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.Host] = r.Header.Clone()
		mu.Unlock()
		if r.Host == "a.test" {
			http.Redirect(w, r, "http://b.test/robots.txt", http.StatusMovedPermanently)
			return
		}
		_, _ = w.Write([]byte("User-agent: *\nAllow: /\n"))
	}))
	defer srv.Close()
	addr := srv.Listener.Addr().String()
	c := New(Options{Dialer: netguard.New(netguard.Options{ConnectTo: []config.ConnectRule{{Pattern: "*.test", Address: addr}}})})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	own := http.Header{"X-Api-Key": {"k1"}, "Accept": {"text/plain"}}
	resp, err := c.Get(ctx, Request{URL: "http://a.test/robots.txt", UserAgent: "TrawlerBot/test", Robots: true, Header: own})
	if err != nil || resp.Status != 200 {
		t.Fatalf("robots.txt: %v %+v", err, resp)
	}
	mu.Lock()
	defer mu.Unlock()
	if seen["a.test"].Get("X-Api-Key") != "k1" {
		t.Errorf("a.test saw %v; want the crawl's key", seen["a.test"])
	}
	if b := seen["b.test"]; b == nil || b.Get("X-Api-Key") != "" || b.Get("Accept") != "text/plain" {
		t.Errorf("b.test saw %v; want no key (another host), the Accept kept", b)
	}
}
