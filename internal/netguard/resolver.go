package netguard

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

// Resolver caches DNS answers: successes for ttl, failures for negTTL, so a crawl of many
// pages on one host asks DNS once, and a dead host does not cost a lookup per URL.
// Concurrent lookups of one name share a single query.
type Resolver struct {
	lookup func(ctx context.Context, host string) ([]netip.Addr, error)
	ttl    time.Duration
	negTTL time.Duration
	now    func() time.Time

	mu      sync.Mutex
	entries map[string]dnsEntry
	group   singleflight.Group
	maxSize int
}

type dnsEntry struct {
	ips     []netip.Addr
	err     error
	expires time.Time
}

// NewResolver caches lookup (nil: the system resolver).
func NewResolver(lookup func(ctx context.Context, host string) ([]netip.Addr, error), ttl, negTTL time.Duration) *Resolver {
	if lookup == nil {
		lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	return &Resolver{lookup: lookup, ttl: ttl, negTTL: negTTL, now: time.Now,
		entries: map[string]dnsEntry{}, maxSize: 100_000}
}

// Lookup returns host's addresses; an IP literal is returned as is.
func (r *Resolver) Lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	key := hostKey(host)
	if ip, err := netip.ParseAddr(key); err == nil {
		return []netip.Addr{ip}, nil
	}
	now := r.now()
	r.mu.Lock()
	e, ok := r.entries[key]
	r.mu.Unlock()
	if ok && now.Before(e.expires) {
		return e.ips, e.err
	}
	v, err, _ := r.group.Do(key, func() (any, error) {
		ips, err := r.lookup(ctx, key)
		if err == nil && len(ips) == 0 {
			err = fmt.Errorf("lookup %s: no addresses", key)
		}
		if err != nil {
			err = fmt.Errorf("lookup %s: %w", key, err)
		}
		ttl := r.ttl
		if err != nil {
			ttl = r.negTTL
		}
		if ctx.Err() == nil { // a cancelled caller's failure says nothing about the host
			r.mu.Lock()
			if len(r.entries) >= r.maxSize {
				r.entries = map[string]dnsEntry{} // crude but bounded; entries are cheap to refetch
			}
			r.entries[key] = dnsEntry{ips: ips, err: err, expires: r.now().Add(ttl)}
			r.mu.Unlock()
		}
		return ips, err
	})
	ips, _ := v.([]netip.Addr)
	return ips, err
}
