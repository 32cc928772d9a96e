// Package listen owns listening on a configured address that may name a range of ports
// ("127.0.0.1:9464-9479"): the first free port of the range is taken, so several processes
// on one machine started with one setting each get a port of their own, in a known range a
// Prometheus can scrape.
package listen

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
)

// maxRange bounds how many ports a range may name.
const maxRange = 256

// Parse splits addr into its host and its first and last port (equal for one port).
func Parse(addr string) (host string, first, last int, err error) {
	host, ports, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, 0, fmt.Errorf("want host:port or host:first-last, not %q", addr)
	}
	lo, hi, isRange := strings.Cut(ports, "-")
	if first, err = port(lo); err != nil {
		return "", 0, 0, err
	}
	last = first
	if isRange {
		if last, err = port(hi); err != nil {
			return "", 0, 0, err
		}
		if first == 0 || last < first || last-first >= maxRange {
			return "", 0, 0, fmt.Errorf("port range %q: want first-last, 1 to 65535, first ≤ last, at most %d ports", ports, maxRange)
		}
	}
	return host, first, last, nil
}

func port(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > 65535 {
		return 0, fmt.Errorf("port %q is not a number from 0 to 65535", s)
	}
	return n, nil
}

// TCP listens on addr, or on the first port of its range no other socket holds. A single
// port that is taken is an error, as is a range whose every port is.
func TCP(addr string) (net.Listener, error) {
	host, first, end, err := Parse(addr)
	if err != nil {
		return nil, err
	}
	var taken error
	for p := first; p <= end; p++ {
		ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(p)))
		if err == nil {
			return ln, nil
		}
		if !errors.Is(err, syscall.EADDRINUSE) || first == end {
			return nil, err
		}
		taken = err
	}
	return nil, fmt.Errorf("listen on %s: every port of the range is taken (%w)", addr, taken)
}

// IsLoopbackHost says whether a host or host:port (a listener's address, a request's Host)
// names this machine's loopback: localhost, 127.0.0.0/8, ::1.
func IsLoopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}
