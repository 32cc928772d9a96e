package crawl

import (
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strings"
)

// A spec's header values and its proxy may name a secret instead of carrying it:
//
//	"headers": {"Authorization": "secret:env:CRAWL_API_TOKEN"}
//	"proxy": "secret:file:/run/secrets/crawl-proxy"
//
// The spec — in crawls.spec, in every workflow input, in `trawler status` — then holds the
// name, and each worker resolves it from its own environment or files when it builds the
// crawl's rules. A worker that cannot resolve it fetches nothing for the crawl (each URL a
// counted network error), never the request without it or around the proxy.

// SecretPrefix starts a spec value that names a secret.
const SecretPrefix = "secret:"

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// IsSecretRef says whether v names a secret.
func IsSecretRef(v string) bool { return strings.HasPrefix(strings.TrimSpace(v), SecretPrefix) }

// CheckSecretRef says why v is not a well-formed secret name: secret:env:NAME or
// secret:file:/absolute/path.
func CheckSecretRef(v string) error {
	kind, name, _ := strings.Cut(strings.TrimPrefix(strings.TrimSpace(v), SecretPrefix), ":")
	switch {
	case kind == "env" && envName.MatchString(name):
		return nil
	case kind == "file" && strings.HasPrefix(name, "/"):
		return nil
	}
	return fmt.Errorf("%q: name a secret as secret:env:NAME or secret:file:/absolute/path", Clip(v, MaxFieldBytes))
}

// ResolveSecret is v, or the secret v names, read from this process's environment or files.
func ResolveSecret(v string) (string, error) {
	if !IsSecretRef(v) {
		return v, nil
	}
	if err := CheckSecretRef(v); err != nil {
		return "", err
	}
	kind, name, _ := strings.Cut(strings.TrimPrefix(strings.TrimSpace(v), SecretPrefix), ":")
	if kind == "env" {
		s := strings.TrimSpace(os.Getenv(name))
		if s == "" {
			return "", fmt.Errorf("secret %s: the environment variable %s is not set on this worker", v, name)
		}
		return s, nil
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return "", fmt.Errorf("secret %s: %w", v, err)
	}
	if s := strings.TrimSpace(string(b)); s != "" {
		return s, nil
	}
	return "", fmt.Errorf("secret %s: the file is empty", v)
}

// ResolvedHeader is Header with each secret name resolved, each value checked as a header's.
func (s Spec) ResolvedHeader() (http.Header, error) {
	h := s.Header()
	for name, values := range h {
		v, err := ResolveSecret(values[0])
		if err != nil {
			return nil, fmt.Errorf("headers: %s: %w", name, err)
		}
		if v != values[0] {
			if err := CheckHeader(name, v); err != nil {
				return nil, fmt.Errorf("headers: the secret %s names: %w", values[0], err)
			}
			h.Set(name, v)
		}
	}
	return h, nil
}

// ResolvedProxy is Proxy (or def, when the spec names none) with a secret name resolved.
func (s Spec) ResolvedProxy(def string) (string, error) {
	p := s.Proxy
	if p == "" {
		p = def
	}
	v, err := ResolveSecret(p)
	if err != nil {
		return "", fmt.Errorf("proxy: %w", err)
	}
	return v, nil
}
