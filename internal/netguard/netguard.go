// Package netguard owns how Trawler opens connections to the web: the connect-to overrides
// (curl --connect-to style, for the test web and for pinning hosts), a DNS cache with positive
// and negative TTLs, and the guard that refuses loopback, private, link-local, CGNAT,
// multicast, unspecified and cloud-metadata addresses. The guard checks the IP actually being
// dialed, so neither a DNS answer nor a redirect can route a request around it. Only a
// connect-to rule (an explicit opt-in by the operator) or an allow-list opens such a target.
package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"syscall"
	"time"

	"github.com/trawlerdev/trawler/internal/config"
)

// ErrBlocked is wrapped by every refusal of the guard.
var ErrBlocked = errors.New("address refused by the private-address guard")

// Dialer dials TCP for HTTP clients. Use DialContext as http.Transport.DialContext.
type Dialer struct {
	connectTo []config.ConnectRule
	allow     []netip.Prefix
	resolver  *Resolver
	net       net.Dialer
}

// Options configures a Dialer.
type Options struct {
	ConnectTo      []config.ConnectRule
	Allow          []netip.Prefix // addresses the guard lets through anyway
	ConnectTimeout time.Duration
	Resolver       *Resolver // nil: a new cache over the system resolver
}

// New builds a Dialer.
func New(o Options) *Dialer {
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = 10 * time.Second
	}
	if o.Resolver == nil {
		o.Resolver = NewResolver(nil, 5*time.Minute, time.Minute)
	}
	d := &Dialer{connectTo: o.ConnectTo, allow: o.Allow, resolver: o.Resolver}
	d.net = net.Dialer{Timeout: o.ConnectTimeout, KeepAlive: 30 * time.Second, ControlContext: d.control}
	return d
}

// overrideKey marks a dial that a connect-to rule routed, so control lets it through.
type overrideKey struct{}

// DialContext connects to addr (host:port). A connect-to rule for the host wins; otherwise the
// host is resolved through the cache and the first address the guard accepts is dialed.
func (d *Dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("dial %q: %w", addr, err)
	}
	if target, ok := d.Override(host); ok {
		return d.net.DialContext(context.WithValue(ctx, overrideKey{}, true), network, target)
	}
	ips, err := d.resolver.Lookup(ctx, host)
	if err != nil {
		return nil, err
	}
	var firstErr error
	for _, ip := range ips {
		if why := d.refuse(ip); why != "" {
			if firstErr == nil {
				firstErr = fmt.Errorf("%s resolves to %s (%s): %w", host, ip, why, ErrBlocked)
			}
			continue
		}
		conn, err := d.net.DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
		if err == nil {
			return conn, nil
		}
		if firstErr == nil || errors.Is(firstErr, ErrBlocked) {
			firstErr = err
		}
	}
	if firstErr == nil {
		firstErr = fmt.Errorf("%s: no addresses", host)
	}
	return nil, firstErr
}

// Override returns the connect-to target for host, if a rule matches.
func (d *Dialer) Override(host string) (string, bool) {
	h := hostKey(host)
	for _, r := range d.connectTo {
		if r.Match(h) {
			return r.Address, true
		}
	}
	return "", false
}

// Resolver returns the DNS cache the dialer uses.
func (d *Dialer) Resolver() *Resolver { return d.resolver }

// control runs on the socket about to connect: the last word on the IP really dialed. A dial
// routed by a connect-to rule is the operator's explicit choice and passes.
func (d *Dialer) control(ctx context.Context, network, address string, _ syscall.RawConn) error {
	if ctx.Value(overrideKey{}) != nil {
		return nil
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("dial %s: %w", address, err)
	}
	if why := d.refuse(ap.Addr()); why != "" {
		return fmt.Errorf("dial %s (%s): %w", address, why, ErrBlocked)
	}
	return nil
}

func (d *Dialer) refuse(ip netip.Addr) string {
	why := Classify(ip)
	if why == "" {
		return ""
	}
	for _, p := range d.allow {
		if p.Contains(ip.Unmap()) {
			return ""
		}
	}
	return why
}

// Target returns the address a connection to host would go to, and whether a connect-to rule
// chose it: what per-IP politeness counts requests by.
func (d *Dialer) Target(ctx context.Context, host string) (netip.Addr, bool, error) {
	if target, ok := d.Override(host); ok {
		h, _, err := net.SplitHostPort(target)
		if err != nil {
			return netip.Addr{}, true, err
		}
		ips, err := d.resolver.Lookup(ctx, h)
		if err != nil {
			return netip.Addr{}, true, err
		}
		return ips[0], true, nil
	}
	ips, err := d.resolver.Lookup(ctx, host)
	if err != nil {
		return netip.Addr{}, false, err
	}
	for _, ip := range ips {
		if d.refuse(ip) == "" {
			return ip, false, nil
		}
	}
	return ips[0], false, nil
}

// RefusesBehindProxy says why a request for host must not go through an outbound proxy ("":
// it may). The proxy, not this process, dials the target, so no dial of ours has the last word:
// a connect-to rule routes the host, or every address it resolves to must be allowed (one
// forbidden address is enough to refuse: mixed records, a rebinding answer); a name that does
// not resolve here passes only when it is no internal name (.internal, .local, a single label…),
// since the proxy may resolve what this process cannot. The proxy must still filter its own
// egress: a public name may resolve to a private address there.
func (d *Dialer) RefusesBehindProxy(ctx context.Context, host string) string {
	if _, ok := d.Override(host); ok {
		return ""
	}
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return d.refuse(ip)
	}
	ips, err := d.resolver.Lookup(ctx, host)
	if err != nil || len(ips) == 0 {
		if internalName(host) {
			return "an internal name"
		}
		return ""
	}
	for _, ip := range ips {
		if why := d.refuse(ip); why != "" {
			return why
		}
	}
	return ""
}

// internalName says whether host is a name only a private network resolves: one label, or
// under a suffix reserved or used for internal names.
func internalName(host string) bool {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	if !strings.Contains(h, ".") {
		return true
	}
	for _, suffix := range []string{".internal", ".local", ".localhost", ".lan", ".home.arpa", ".intranet", ".corp", ".private", ".svc", ".cluster.local"} {
		if strings.HasSuffix(h, suffix) {
			return true
		}
	}
	return false
}

// Refuses says why every address host resolves to is forbidden, or "" when one is allowed, a
// connect-to rule routes the host, or it does not resolve (the request itself then fails).
func (d *Dialer) Refuses(ctx context.Context, host string) string {
	if _, ok := d.Override(host); ok {
		return ""
	}
	ips, err := d.resolver.Lookup(ctx, host)
	if err != nil || len(ips) == 0 {
		return ""
	}
	why := ""
	for _, ip := range ips {
		if why = d.refuse(ip); why == "" {
			return ""
		}
	}
	return why
}
