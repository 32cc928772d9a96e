package policy

import (
	"context"
	"fmt"

	"github.com/trawlerdev/trawler/internal/crawl"
)

// ProxyGuard is the address guard as CheckProxy asks it (netguard.Dialer).
type ProxyGuard interface {
	// Refuses says why every address host resolves to is forbidden ("" when one is allowed).
	Refuses(ctx context.Context, host string) string
}

// CheckProxy refuses a spec whose proxy the fetch client's address guard would refuse to dial:
// such a crawl could fetch nothing. A proxy that is the worker's own (TRAWLER_PROXY) is the
// operator's and dialed as named; one that does not resolve now is left to fail its requests
// as network errors.
func (c *Crawls) CheckProxy(ctx context.Context, spec crawl.Spec) error {
	if c == nil || spec.Proxy == "" || c.Guard == nil {
		return nil
	}
	raw, err := crawl.ResolveSecret(spec.Proxy)
	if err != nil {
		return nil // a secret this process cannot read: the fetch workers resolve it, and judge its dials
	}
	p, err := crawl.ParseProxy(raw)
	if err != nil {
		return err
	}
	if own, err := crawl.ParseProxy(c.DefaultProxy); err == nil && c.DefaultProxy != "" && own.String() == p.String() {
		return nil
	}
	if why := c.Guard.Refuses(ctx, p.Hostname()); why != "" {
		return fmt.Errorf("proxy %s: the address guard refuses it (%s): a proxy a spec names is dialed as any target is; "+
			"allow its network with TRAWLER_ALLOW_NETWORKS, or make it the workers' own TRAWLER_PROXY", p.Redacted(), why)
	}
	return nil
}
