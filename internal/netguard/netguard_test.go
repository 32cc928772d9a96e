package netguard

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/config"
	"github.com/trawlerdev/trawler/internal/testenv"
	"github.com/trawlerdev/trawler/internal/testweb"
)

func TestClassify(t *testing.T) {
	for ip, want := range map[string]string{
		"8.8.8.8": "", "1.1.1.1": "", "2606:4700::1111": "", "93.184.216.34": "",
		"127.0.0.1": "loopback", "127.8.9.10": "loopback", "::1": "loopback",
		"10.1.2.3": "private", "172.16.0.1": "private", "172.31.255.255": "private", "192.168.1.1": "private",
		"172.32.0.1": "", "fd12:3456::1": "private (unique local)",
		"169.254.1.1": "link-local", "fe80::1": "link-local",
		"169.254.169.254": "cloud metadata", "fd00:ec2::254": "cloud metadata", "168.63.129.16": "cloud metadata", "168.63.129.17": "",
		"100.64.0.1": "carrier-grade NAT", "100.128.0.1": "",
		"224.0.0.1": "multicast", "ff02::1": "multicast",
		"0.0.0.0": "unspecified", "::": "unspecified",
		"::ffff:127.0.0.1": "loopback", "::ffff:10.0.0.1": "private", "::ffff:169.254.169.254": "cloud metadata",
		"64:ff9b::a9fe:a9fe": "cloud metadata", "64:ff9b::808:808": "",
		"255.255.255.255": "reserved",
		// Ways to wrap a private address in a "public" IPv6 one, and other special-purpose blocks.
		"2002:0a00:0001::1": "private", "2002:7f00:0001::": "loopback", "2002:0808:0808::1": "",
		"64:ff9b:1::a00:1": "NAT64 local use", "::10.0.0.1": "IPv4-compatible (deprecated)",
		"::127.0.0.1": "IPv4-compatible (deprecated)", "fec0::1": "site-local (deprecated)",
		"2001:0:4136:e378:8000:63bf:3fff:fdd2": "Teredo tunnelling", "2001:db8::1": "documentation",
		"100::1": "discard-only", "192.0.2.1": "documentation", "203.0.113.9": "documentation",
	} {
		if got := Classify(netip.MustParseAddr(ip)); got != want {
			t.Errorf("Classify(%s) = %q, want %q", ip, got, want)
		}
	}
}

func fixedResolver(answers map[string][]string) (*Resolver, *atomic.Int32) {
	var calls atomic.Int32
	r := NewResolver(func(_ context.Context, host string) ([]netip.Addr, error) {
		calls.Add(1)
		ips, ok := answers[host]
		if !ok {
			return nil, errors.New("no such host")
		}
		var out []netip.Addr
		for _, s := range ips {
			out = append(out, netip.MustParseAddr(s))
		}
		return out, nil
	}, time.Minute, time.Minute)
	return r, &calls
}

func client(d *Dialer) *http.Client {
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DialContext: d.DialContext}}
}

func TestGuardRefusesPrivateTargetsEvenAfterDNSAndRedirects(t *testing.T) {
	var hits atomic.Int32
	var port string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.URL.Path == "/bounce" {
			http.Redirect(w, r, "http://127.0.0.1:"+port+"/secret", http.StatusFound)
			return
		}
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	_, port, _ = net.SplitHostPort(srv.Listener.Addr().String())
	res, _ := fixedResolver(map[string][]string{
		"rebind.example": {"127.0.0.1"},
		"meta.example":   {"169.254.169.254"},
		"mixed.example":  {"10.0.0.1", "::ffff:127.0.0.1"},
	})
	rules, _ := config.ParseConnectTo("site.test=" + srv.Listener.Addr().String())
	c := client(New(Options{ConnectTo: rules, Resolver: res}))

	for _, u := range []string{
		"http://127.0.0.1:" + port + "/",
		"http://[::1]:" + port + "/",
		"http://rebind.example:" + port + "/",
		"http://meta.example:" + port + "/latest/meta-data/",
		"http://mixed.example:" + port + "/",
		"http://site.test/bounce", // allowed hop, then a redirect to loopback
	} {
		resp, err := c.Get(u)
		if err == nil {
			resp.Body.Close()
			t.Errorf("GET %s succeeded; want refused", u)
			continue
		}
		if !errors.Is(err, ErrBlocked) && !strings.Contains(err.Error(), "refused by the private-address guard") {
			t.Errorf("GET %s: %v; want ErrBlocked", u, err)
		}
	}
	if n := hits.Load(); n != 1 {
		t.Errorf("server saw %d requests; only the connect-to hop may arrive", n)
	}
}

func TestConnectToKeepsHostHeaderAndPools(t *testing.T) {
	var hosts []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hosts = append(hosts, r.Host)
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	rules, _ := config.ParseConnectTo("*.test=" + srv.Listener.Addr().String())
	res, calls := fixedResolver(nil)
	c := client(New(Options{ConnectTo: rules, Resolver: res}))
	for _, u := range []string{"http://h0001.test/", "http://h0002.test/a", "http://h0001.test/b"} {
		resp, err := c.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if strings.Join(hosts, ",") != "h0001.test,h0002.test,h0001.test" {
		t.Errorf("Host headers: %v", hosts)
	}
	if calls.Load() != 0 {
		t.Errorf("connect-to hosts went to DNS %d times", calls.Load())
	}
	if _, err := c.Get("http://other.example/"); err == nil {
		t.Error("a host outside the rules reached the server")
	}
}

func TestAllowListOpensATarget(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	c := client(New(Options{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}))
	resp, err := c.Get(srv.URL)
	if err != nil {
		t.Fatalf("allow-listed loopback refused: %v", err)
	}
	resp.Body.Close()
}

func TestResolverCachesAnswersAndFailures(t *testing.T) {
	r, calls := fixedResolver(map[string][]string{"a.example": {"93.184.216.34"}})
	now := time.Unix(1000, 0)
	r.now = func() time.Time { return now }
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		if ips, err := r.Lookup(ctx, "A.example."); err != nil || len(ips) != 1 {
			t.Fatalf("lookup: %v %v", ips, err)
		}
		if _, err := r.Lookup(ctx, "gone.example"); err == nil {
			t.Fatal("failed lookup succeeded")
		}
	}
	if calls.Load() != 2 {
		t.Fatalf("%d lookups for 6 calls; want 2 (one answer, one failure cached)", calls.Load())
	}
	now = now.Add(2 * time.Minute)
	_, _ = r.Lookup(ctx, "a.example")
	_, _ = r.Lookup(ctx, "gone.example")
	if calls.Load() != 4 {
		t.Fatalf("%d lookups after expiry; want 4", calls.Load())
	}
	if ips, _ := r.Lookup(ctx, "192.0.2.7"); len(ips) != 1 || calls.Load() != 4 {
		t.Fatal("IP literal went to DNS")
	}
}

// The crawler's option reaches every virtual host of the test web through one listener.
func TestConnectToReachesTheTestWeb(t *testing.T) {
	srv, rules := testenv.TestWeb(t, testweb.DefaultConfig())
	web := srv.Web
	c := client(New(Options{ConnectTo: rules}))
	for _, u := range []string{"http://h0001.test/robots.txt", "http://dup.test/robots.txt"} {
		resp, err := c.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("%s: %d", u, resp.StatusCode)
		}
	}
	rep := web.Audit().Report()
	if rep.Totals.Requests != 2 || rep.Host("h0001.test") == nil || rep.Host("dup.test") == nil {
		t.Errorf("audit: %+v", rep.Totals)
	}
}

func TestRefusesHostsWhoseEveryAddressIsForbidden(t *testing.T) {
	d := New(Options{Allow: []netip.Prefix{netip.MustParsePrefix("10.1.0.0/16")}})
	ctx := context.Background()
	for host, refused := range map[string]bool{
		"169.254.169.254": true, "127.0.0.1": true, "::ffff:127.0.0.1": true, "10.0.0.1": true, "fd00::1": true,
		"100.64.0.1": true, "224.0.0.1": true, "0.0.0.0": true, "::1": true,
		"10.1.2.3":      false, // allow-listed
		"93.184.216.34": false, "2606:2800:220:1::": false,
	} {
		if why := d.Refuses(ctx, host); (why != "") != refused {
			t.Errorf("Refuses(%s) = %q, want refused=%v", host, why, refused)
		}
	}
}
