package fetch

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/config"
	"github.com/trawlerdev/trawler/internal/netguard"
)

// The crawl's own headers, Authorization and Cookie reach the server as given but are
// recorded (the WARC request record, fetches.request_head) as "[redacted]", as is the session
// a site sets (Set-Cookie, in the response record), unless the crawl asks to keep them.
func TestRecordedRequestHeadsRedactSecrets(t *testing.T) {
	var mu sync.Mutex
	var seen http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = r.Header.Clone()
		mu.Unlock()
		http.SetCookie(w, &http.Cookie{Name: "site-session", Value: "s1t3-s3ssion"})
		_, _ = w.Write([]byte("ok"))
	}))
	defer srv.Close()
	c := New(Options{Dialer: netguard.New(netguard.Options{ConnectTo: []config.ConnectRule{{Pattern: "*.test", Address: srv.Listener.Addr().String()}}})})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	own := http.Header{"X-Api-Key": {"k1-secret"}, "Authorization": {"Bearer t0ken"}, "Accept-Language": {"de"}}
	req := Request{URL: "http://a.test/", UserAgent: "TrawlerBot/test", Header: own, Cookies: []*http.Cookie{{Name: "sid", Value: "s3ssion"}}}
	resp, err := c.Get(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if seen.Get("X-Api-Key") != "k1-secret" || seen.Get("Authorization") != "Bearer t0ken" || !strings.Contains(seen.Get("Cookie"), "s3ssion") {
		t.Errorf("the server saw %v; want the crawl's values as given", seen)
	}
	mu.Unlock()
	head := resp.RequestHead
	for _, secret := range []string{"k1-secret", "t0ken", "s3ssion", "de\r\n"} {
		if strings.Contains(head, secret) {
			t.Errorf("recorded request head keeps %q:\n%s", secret, head)
		}
	}
	if strings.Contains(resp.ResponseHead, "s1t3-s3ssion") || !strings.Contains(resp.ResponseHead, "Set-Cookie: [redacted]\r\n") ||
		!strings.Contains(resp.Header.Get("Set-Cookie"), "s1t3-s3ssion") {
		t.Errorf("the recorded response head keeps the session the site set (or the jar lost it):\n%s", resp.ResponseHead)
	}
	for _, line := range []string{"X-Api-Key: [redacted]", "Authorization: [redacted]", "Cookie: [redacted]", "User-Agent: TrawlerBot/test"} {
		if !strings.Contains(head, line+"\r\n") {
			t.Errorf("recorded request head lacks %q:\n%s", line, head)
		}
	}
	req.RecordSecrets = true
	if resp, err = c.Get(ctx, req); err != nil || !strings.Contains(resp.RequestHead, "X-Api-Key: k1-secret\r\n") || !strings.Contains(resp.RequestHead, "sid=s3ssion") ||
		!strings.Contains(resp.ResponseHead, "s1t3-s3ssion") {
		t.Errorf("recordSecretHeaders: %v\n%s", err, resp.RequestHead)
	}
}
