package crawl

import (
	"fmt"
	"net/url"
)

// ParseProxy reads an outbound proxy URL: http://, https:// or socks5:// (socks5h://: names
// resolved by the proxy), with an optional user:password, a host and a port.
func ParseProxy(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("not a URL (%s)", "its text is not repeated: it may hold a password")
	}
	switch u.Scheme {
	case "http", "https", "socks5", "socks5h":
	default:
		return nil, fmt.Errorf("%q: the scheme must be http, https or socks5", u.Redacted())
	}
	if u.Hostname() == "" || u.Port() == "" {
		return nil, fmt.Errorf("%q: name the proxy's host and port", u.Redacted())
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("%q: a proxy URL has no path, query or fragment", u.Redacted())
	}
	return u, nil
}
