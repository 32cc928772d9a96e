package pacing

import (
	"context"
	"net/netip"
	"time"

	"github.com/trawlerdev/trawler/internal/urlnorm"
)

// IPLimit is per-IP politeness: request starts to one address at least Gap apart across all
// its hosts, booked in Postgres so every worker counts them (0: off), for fetch leases and
// rendered pages' subresources alike. Connect-to targets count only with Override.
type IPLimit struct {
	Dialer   Resolver
	Gap      time.Duration
	Override bool
}

// Resolver says which address a host's requests go to, and whether it is a connect-to
// target (netguard.Dialer in a worker).
type Resolver interface {
	Target(ctx context.Context, host string) (ip netip.Addr, override bool, err error)
}

// Of is the address the host's requests count under, or the zero address when the limit
// does not apply (off, a connect-to target, or unresolvable: the request itself will then
// fail and be retried).
func (l IPLimit) Of(ctx context.Context, authority string) netip.Addr {
	if l.Gap <= 0 || l.Dialer == nil {
		return netip.Addr{}
	}
	ip, override, err := l.Dialer.Target(ctx, urlnorm.Hostname(authority))
	if err != nil || (override && !l.Override) {
		return netip.Addr{}
	}
	return ip
}
