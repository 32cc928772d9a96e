package netguard

import (
	"net/netip"
	"strings"
)

// blockedRanges are the networks no crawl request may reach by default, with the reason.
var blockedRanges = []struct {
	prefix netip.Prefix
	why    string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "unspecified"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private"},
	{netip.MustParsePrefix("100.64.0.0/10"), "carrier-grade NAT"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("169.254.169.254/32"), "cloud metadata"},
	// Azure's wireserver (host agent, DNS, DHCP, metadata): a public address every VM reaches.
	{netip.MustParsePrefix("168.63.129.16/32"), "cloud metadata"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignments"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},
	{netip.MustParsePrefix("192.0.2.0/24"), "documentation"},
	{netip.MustParsePrefix("198.51.100.0/24"), "documentation"},
	{netip.MustParsePrefix("203.0.113.0/24"), "documentation"},
	{netip.MustParsePrefix("192.88.99.0/24"), "6to4 relay (deprecated)"},
	{netip.MustParsePrefix("::/128"), "unspecified"},
	{netip.MustParsePrefix("::1/128"), "loopback"},
	{netip.MustParsePrefix("fd00:ec2::254/128"), "cloud metadata"},
	{netip.MustParsePrefix("fc00::/7"), "private (unique local)"},
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
	{netip.MustParsePrefix("ff00::/8"), "multicast"},
	{netip.MustParsePrefix("fec0::/10"), "site-local (deprecated)"},
	{netip.MustParsePrefix("::/96"), "IPv4-compatible (deprecated)"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "NAT64 local use"},
	{netip.MustParsePrefix("2001::/32"), "Teredo tunnelling"},
	{netip.MustParsePrefix("2001:db8::/32"), "documentation"},
	{netip.MustParsePrefix("100::/64"), "discard-only"},
}

// sixToFour embeds an IPv4 address in bits 16–47 (RFC 3056): 2002:0a00:0001::/48 is 10.0.0.1's
// network, reached through whatever relay will carry it.
var sixToFour = netip.MustParsePrefix("2002::/16")

// nat64 embeds an IPv4 address in its last 32 bits (RFC 6052).
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// Classify names why ip is refused by default, or returns "" for a public address.
// IPv4-mapped, NAT64 and 6to4 IPv6 addresses are judged by the IPv4 address inside them.
func Classify(ip netip.Addr) string {
	if !ip.IsValid() {
		return "invalid"
	}
	ip = ip.WithZone("").Unmap()
	if nat64.Contains(ip) {
		b := ip.As16()
		ip = netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	} else if sixToFour.Contains(ip) {
		b := ip.As16()
		ip = netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})
	}
	for _, r := range blockedRanges {
		if r.prefix.Contains(ip) {
			return r.why
		}
	}
	return ""
}

// hostKey is a host name as rules and caches compare it: lower case, no trailing dot, no
// brackets.
func hostKey(host string) string {
	return strings.TrimSuffix(strings.Trim(strings.ToLower(host), "[]"), ".")
}
