package fetch

import (
	"context"
	"errors"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/netguard"
	"github.com/trawlerdev/trawler/internal/testenv"
	"github.com/trawlerdev/trawler/internal/testweb"
)

// Through a proxy, a request reaches its target only by the proxy (this process dials the
// proxy alone: the test hosts have no address here), robots.txt's redirects too; and the
// address guard still refuses a target it would not dial, before the proxy sees it.
func TestRequestsGoThroughTheProxyAndTheGuardStillJudges(t *testing.T) {
	cfg := testweb.DefaultConfig()
	cfg.Hosts, cfg.Pages = 2, 3
	srv, _ := testenv.TestWeb(t, cfg)
	px, err := testweb.StartProxy(srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = px.Close() })
	proxyURL, _ := url.Parse(px.URL())
	// The worker's own proxy (trusted), and no connect-to: *.test cannot be dialed directly.
	c := New(Options{Dialer: netguard.New(netguard.Options{}), TrustedProxy: proxyURL.String()})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	host := "http://" + srv.Web.HostName(0)
	resp, err := c.Get(ctx, Request{URL: host + "/", UserAgent: "TrawlerBot/test", Proxy: proxyURL})
	if err != nil || resp.Status != 200 || len(resp.Body) == 0 {
		t.Fatalf("through the proxy: %v %+v", err, resp)
	}
	if _, err := c.Get(ctx, Request{URL: host + "/", UserAgent: "TrawlerBot/test"}); err == nil {
		t.Fatal("a direct request to a test host succeeded: the test cannot tell the proxy was used")
	}
	if _, err := c.Get(ctx, Request{URL: host + "/robots.txt", UserAgent: "TrawlerBot/test", Proxy: proxyURL}); err != nil {
		t.Fatalf("robots.txt through the proxy: %v", err)
	}
	reqs := srv.Web.Audit().Requests(srv.Web.HostName(0))
	if len(reqs) != 2 || !reqs[0].Proxied || !reqs[1].Proxied {
		t.Errorf("the test web saw %+v; want two requests, both through the proxy", reqs)
	}
	before := px.Forwarded()
	for _, target := range []string{"http://127.0.0.1:9/secret", "http://10.1.2.3/", "http://metadata.google.internal/computeMetadata/v1/", "http://intranet/"} {
		_, err = c.Get(ctx, Request{URL: target, UserAgent: "TrawlerBot/test", Proxy: proxyURL})
		if !errors.Is(err, netguard.ErrBlocked) {
			t.Errorf("%s through the proxy: %v; want refused by the guard", target, err)
		}
	}
	if px.Forwarded() != before {
		t.Errorf("the proxy forwarded %d refused requests", px.Forwarded()-before)
	}
	// A proxy a crawl's spec names (not the worker's) is dialed through the guard: one on a
	// loopback address is refused, unless the operator allows its network. The refusal is
	// the proxy's (ErrProxy: a network error of the request), never a verdict on the target.
	spec := New(Options{Dialer: netguard.New(netguard.Options{})})
	if _, err := spec.Get(ctx, Request{URL: host + "/", UserAgent: "TrawlerBot/test", Proxy: proxyURL}); !errors.Is(err, ErrProxy) ||
		errors.Is(err, netguard.ErrBlocked) || !strings.Contains(err.Error(), "guard") {
		t.Errorf("a spec's loopback proxy: %v; want the proxy refused by the guard, as ErrProxy only", err)
	}
	allowed := New(Options{Dialer: netguard.New(netguard.Options{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})})
	if resp, err := allowed.Get(ctx, Request{URL: host + "/", UserAgent: "TrawlerBot/test", Proxy: proxyURL}); err != nil || resp.Status != 200 {
		t.Errorf("a spec's proxy in an allowed network: %v", err)
	}
}
