package fetching

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/trawlerdev/trawler/internal/urlnorm"
)

// isNoSuchHost reports a DNS answer that the name does not exist.
func isNoSuchHost(err error) bool {
	var dnsErr *net.DNSError
	return errors.As(err, &dnsErr) && dnsErr.IsNotFound
}

// hostHealth keeps the dead-site clock: a sensible answer stops it, a DNS "no such host" or a
// front page answering 404/410 starts it, and a host failing longer than retireAfter is retired.
// A host known to be healthy when the lease began (healthy) has no clock to stop: no write.
func (f *Stage) hostHealth(ctx context.Context, host string, res LeaseResult, retireAfter time.Duration, healthy bool) (bool, error) {
	switch {
	case res.Gone == "front page gone" || (res.Gone != "" && !res.Answered):
		if err := f.Hosts.HostFailing(ctx, host, res.Gone); err != nil {
			return false, err
		}
		return f.Hosts.RetireIfDead(ctx, host, retireAfter)
	case res.Answered && !healthy:
		return false, f.Hosts.HostHealthy(ctx, host)
	}
	return false, nil
}

// refusedHost says why the host's every address is forbidden ("" if it may be dialed).
func (f *Stage) refusedHost(ctx context.Context, authority string) string {
	if f.Dialer == nil {
		return ""
	}
	if why := f.Dialer.Refuses(ctx, urlnorm.Hostname(authority)); why != "" {
		return "refused address (" + why + ")"
	}
	return ""
}
