package crawl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A spec names its secrets; the worker resolves them, each value checked as a header's.
func TestSpecSecretsAreNamedAndResolvedByTheWorker(t *testing.T) {
	t.Setenv("TEST_CRAWL_KEY", "k1-from-env")
	file := filepath.Join(t.TempDir(), "proxy")
	if err := os.WriteFile(file, []byte("http://u:p@proxy.test:3128\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := Spec{Seeds: []string{"http://a.test/"}, Headers: map[string]string{"X-Api-Key": "secret:env:TEST_CRAWL_KEY", "Accept-Language": "de"},
		Proxy: "secret:file:" + file}.WithDefaults()
	if err := s.Validate(); err != nil {
		t.Fatalf("a spec naming its secrets: %v", err)
	}
	h, err := s.ResolvedHeader()
	if err != nil || h.Get("X-Api-Key") != "k1-from-env" || h.Get("Accept-Language") != "de" {
		t.Fatalf("headers: %v, %v", h, err)
	}
	if p, err := s.ResolvedProxy(""); err != nil || p != "http://u:p@proxy.test:3128" {
		t.Fatalf("proxy: %q, %v", p, err)
	}
	for _, bad := range []string{"secret:env:", "secret:env:A-B", "secret:file:relative", "secret:vault:x"} {
		s.Headers["X-Api-Key"] = bad
		if err := s.Validate(); err == nil {
			t.Errorf("%q validated", bad)
		}
	}
	s.Headers["X-Api-Key"] = "secret:env:TEST_UNSET_CRAWL_KEY"
	if _, err := s.ResolvedHeader(); err == nil || !strings.Contains(err.Error(), "TEST_UNSET_CRAWL_KEY") {
		t.Errorf("an unset variable: %v", err)
	}
	t.Setenv("TEST_CRAWL_KEY", "bad\nvalue")
	s.Headers["X-Api-Key"] = "secret:env:TEST_CRAWL_KEY"
	if _, err := s.ResolvedHeader(); err == nil || strings.Contains(err.Error(), "bad") {
		t.Errorf("a resolved value a header cannot carry: %v (and never shown)", err)
	}
}
