package testweb

import (
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// serve starts web on a free loopback port and returns a client that reaches every virtual host
// through it (what the crawler's connect-to option does).
func serve(t testing.TB, cfg Config) (*Server, *http.Client) {
	t.Helper()
	web, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := Start(web, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	d := &net.Dialer{Timeout: 5 * time.Second}
	client := &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return d.DialContext(ctx, network, srv.Addr)
			},
			DisableCompression: true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return srv, client
}

type resp struct {
	status int
	header http.Header
	body   []byte
}

func get(t testing.TB, c *http.Client, url string, hdr ...string) resp {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("User-Agent", "TrawlerBot/test")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	r, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer r.Body.Close()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatalf("GET %s: read: %v", url, err)
	}
	return resp{r.StatusCode, r.Header, b}
}

func fastConfig() Config {
	c := DefaultConfig()
	c.DefaultDelay = 200 * time.Millisecond
	c.Tolerance = 10 * time.Millisecond
	c.RetryAfter = time.Second
	c.SlowRobots = 300 * time.Millisecond
	c.ChangePeriod = time.Hour
	return c
}
