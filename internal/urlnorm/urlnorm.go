// Package urlnorm owns URL normalization: one canonical spelling per resource, so the
// frontier sees each page once however a link spells it (RFC 3986 §6 plus the crawler-level
// rules: tracking and session parameters, sorted queries, fragments), and the host key
// (authority) politeness is counted by.
package urlnorm

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/net/idna"

	"github.com/trawlerdev/trawler/internal/pct"
)

// MaxURLLength is the longest normalized URL accepted (browsers and servers commonly stop at
// 2–8 KB; longer ones are almost always traps or garbage).
const MaxURLLength = 2048

// Errors that say why a link is not crawlable.
var (
	ErrScheme  = errors.New("not an http(s) URL")
	ErrNoHost  = errors.New("no host")
	ErrTooLong = errors.New("URL too long")
	ErrSyntax  = errors.New("malformed URL")
)

// Options are the configurable rules. The zero value applies none of the optional rules;
// Default() gives the crawler's defaults.
type Options struct {
	// DropParams removes query parameters whose lower-cased name equals an entry, or starts
	// with it when the entry ends in '*'.
	DropParams []string
	// DefaultPages are final path segments removed as equivalent to their directory
	// (e.g. "index.html": /a/index.html -> /a/).
	DefaultPages []string
}

// Default drops common tracking and session parameters and keeps default pages (many sites
// serve different content at /index.html and /, so stripping it is opt-in). The worker's
// TRAWLER_DROP_PARAMS and TRAWLER_DEFAULT_PAGES settings default to the same.
func Default() Options {
	return Options{DropParams: []string{
		"utm_*", "fbclid", "gclid", "dclid", "msclkid", "mc_cid", "mc_eid", "yclid", "_ga", "_hsenc", "_hsmi",
		"jsessionid", "phpsessid", "aspsessionid*", "sid", "sessionid", "session_id", "cfid", "cftoken",
	}}
}

// Normalizer applies Options.
type Normalizer struct{ opts Options }

// New returns a Normalizer.
func New(o Options) *Normalizer {
	lower := func(in []string) []string {
		out := make([]string, len(in))
		for i, s := range in {
			out[i] = strings.ToLower(s)
		}
		return out
	}
	return &Normalizer{opts: Options{DropParams: lower(o.DropParams), DefaultPages: lower(o.DefaultPages)}}
}

// A URL has two forms. The request form is what is requested and what robots.txt rules are
// matched against: the link as written with only the semantics-preserving normalization of
// RFC 3986 §6.2.2 (case, percent-encoding, dot segments, default port, no fragment), so a site
// whose answer depends on parameter order, or whose robots.txt allows one spelling, gets what
// the link says. The key form (Normalize, Resolve) adds the crawler's rules — dropped tracking
// and session parameters, sorted query, default pages — and is the frontier's identity only.

// Resolve resolves href against base (the page URL, or its <base href>) and returns its key form.
func (n *Normalizer) Resolve(base *url.URL, href string) (string, error) {
	u, err := resolve(base, href)
	if err != nil {
		return "", err
	}
	return n.normalizeURL(u, true)
}

// ResolveRequest resolves href against base and returns its request form.
func (n *Normalizer) ResolveRequest(base *url.URL, href string) (string, error) {
	u, err := resolve(base, href)
	if err != nil {
		return "", err
	}
	return n.normalizeURL(u, false)
}

func resolve(base *url.URL, href string) (*url.URL, error) {
	ref, err := url.Parse(fixPercent(strings.TrimSpace(href)))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSyntax, err)
	}
	if base != nil {
		return base.ResolveReference(ref), nil
	}
	return ref, nil
}

// Normalize returns an absolute URL's key form.
func (n *Normalizer) Normalize(raw string) (string, error) {
	return n.Resolve(nil, raw)
}

// NormalizeRequest returns an absolute URL's request form.
func (n *Normalizer) NormalizeRequest(raw string) (string, error) {
	return n.ResolveRequest(nil, raw)
}

func (n *Normalizer) normalizeURL(u *url.URL, key bool) (string, error) {
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		if scheme == "" {
			return "", fmt.Errorf("%w: relative URL without a base", ErrScheme)
		}
		return "", fmt.Errorf("%w: %s", ErrScheme, scheme)
	}
	if u.Opaque != "" {
		return "", fmt.Errorf("%w: opaque", ErrSyntax)
	}
	host, err := normalizeHost(u.Hostname())
	if err != nil {
		return "", err
	}
	port := u.Port()
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	authority := host
	if strings.Contains(host, ":") { // IPv6 literal
		authority = "[" + host + "]"
	}
	if port != "" {
		p, err := strconv.Atoi(port)
		if err != nil || p < 1 || p > 65535 {
			return "", fmt.Errorf("%w: port %q", ErrSyntax, port)
		}
		if !(scheme == "http" && p == 80 || scheme == "https" && p == 443) {
			authority += ":" + strconv.Itoa(p)
		}
	}
	p := u.EscapedPath()
	if key {
		p = n.dropPathSession(p)
	}
	path := removeDotSegments(normalizePercent(p))
	if path == "" {
		path = "/"
	}
	out := scheme + "://" + authority
	if key {
		out += n.dropDefaultPage(path)
		if q := n.normalizeQuery(u.RawQuery); q != "" {
			out += "?" + q
		}
	} else {
		out += path
		if u.RawQuery != "" {
			out += "?" + normalizePercent(u.RawQuery)
		}
	}
	if len(out) > MaxURLLength {
		return "", fmt.Errorf("%w: %d bytes", ErrTooLong, len(out))
	}
	return out, nil
}

// fixPercent escapes a '%' that does not start a valid escape, as browsers do, so the parser
// accepts real-world links like /100%/ or /%zz.
func fixPercent(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && !(i+2 < len(s) && pct.IsHex(s[i+1]) && pct.IsHex(s[i+2])) {
			b.WriteString("%25")
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func normalizeHost(h string) (string, error) {
	h = strings.TrimRight(strings.ToLower(h), ".")
	if h == "" {
		return "", ErrNoHost
	}
	if ip := net.ParseIP(h); ip != nil {
		if ip.To4() != nil {
			return ip.To4().String(), nil
		}
		return ip.String(), nil
	}
	if unescaped, err := url.PathUnescape(h); err == nil {
		h = unescaped
	}
	ascii, err := idna.Lookup.ToASCII(h)
	if err != nil {
		// Registration-lax fallback: many real hosts have underscores and other letters
		// IDNA's strict profile refuses.
		ascii, err = idna.Punycode.ToASCII(h)
		if err != nil {
			return "", fmt.Errorf("%w: host %q: %v", ErrSyntax, h, err)
		}
	}
	ascii = strings.TrimRight(ascii, ".")
	if ascii == "" || strings.Contains(ascii, "..") || len(ascii) > 253 {
		return "", fmt.Errorf("%w: host %q", ErrSyntax, ascii)
	}
	for _, label := range strings.Split(ascii, ".") {
		if len(label) > 63 {
			return "", fmt.Errorf("%w: host label longer than 63 bytes", ErrSyntax)
		}
		if strings.HasPrefix(label, "xn--") {
			if _, err := idna.Punycode.ToUnicode(label); err != nil {
				return "", fmt.Errorf("%w: host label %q: %v", ErrSyntax, label, err)
			}
		}
	}
	for i := 0; i < len(ascii); i++ {
		if c := ascii[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_') {
			return "", fmt.Errorf("%w: host %q", ErrSyntax, ascii)
		}
	}
	return ascii, nil
}

// normalizePercent decodes percent-encoded unreserved characters, upper-cases the hex of the
// rest, and encodes bytes that must not appear raw (RFC 3986 §6.2.2.1–2).
func normalizePercent(s string) string {
	return pct.Normalize(s, func(c byte) bool {
		return c <= ' ' || c >= 0x7f || c == '"' || c == '<' || c == '>' || c == '\\' || c == '^' || c == '`' || c == '{' || c == '|' || c == '}'
	})
}

// removeDotSegments is RFC 3986 §5.2.4.
func removeDotSegments(p string) string {
	if !strings.Contains(p, ".") {
		return p
	}
	in := strings.Split(p, "/")
	out := make([]string, 0, len(in))
	for i, seg := range in {
		last := i == len(in)-1
		switch seg {
		case ".":
			if last {
				out = append(out, "")
			}
		case "..":
			if len(out) > 1 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, seg)
		}
	}
	r := strings.Join(out, "/")
	if strings.HasPrefix(p, "/") && !strings.HasPrefix(r, "/") {
		r = "/" + r
	}
	return r
}

// jsessionid is the session parameter Java servers put in the path (/p;jsessionid=ABC).
var jsessionid = regexp.MustCompile(`(?i);jsessionid=[^/]*`)

// dropPathSession removes ;jsessionid=… from the path when jsessionid is a dropped parameter.
func (n *Normalizer) dropPathSession(p string) string {
	if !strings.Contains(strings.ToLower(p), ";jsessionid") || !n.dropParam("jsessionid") {
		return p
	}
	return jsessionid.ReplaceAllString(p, "")
}

func (n *Normalizer) dropDefaultPage(p string) string {
	i := strings.LastIndexByte(p, '/')
	last := strings.ToLower(p[i+1:])
	for _, d := range n.opts.DefaultPages {
		if last == d {
			return p[:i+1]
		}
	}
	return p
}

func (n *Normalizer) normalizeQuery(raw string) string {
	if raw == "" {
		return ""
	}
	parts := strings.FieldsFunc(raw, func(r rune) bool { return r == '&' || r == ';' })
	kept := parts[:0]
	for _, p := range parts {
		name, _, _ := strings.Cut(p, "=")
		if n.dropParam(name) {
			continue
		}
		kept = append(kept, normalizePercent(p))
	}
	sort.Strings(kept)
	return strings.Join(kept, "&")
}

func (n *Normalizer) dropParam(name string) bool {
	if un, err := url.QueryUnescape(name); err == nil {
		name = un
	}
	name = strings.ToLower(name)
	for _, d := range n.opts.DropParams {
		if strings.HasSuffix(d, "*") {
			if strings.HasPrefix(name, d[:len(d)-1]) {
				return true
			}
		} else if name == d {
			return true
		}
	}
	return false
}

// Authority is the politeness key of a normalized URL: host, plus the port when it is not the
// scheme's default. http and https of one host share it.
func Authority(normalized string) string {
	rest := normalized[strings.Index(normalized, "://")+3:]
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

// Hostname is an authority's (or a host:port's) host name: without its port and an IPv6
// literal's brackets, in lower case.
func Hostname(authority string) string {
	if h, _, err := net.SplitHostPort(authority); err == nil {
		return strings.ToLower(h)
	}
	return strings.ToLower(strings.Trim(authority, "[]"))
}

// Hash is the frontier's identity of a normalized URL: the first 16 bytes of its SHA-256.
func Hash(normalized string) []byte {
	h := sha256.Sum256([]byte(normalized))
	return h[:16]
}
