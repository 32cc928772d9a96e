package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// Secrets given to flags by file or environment stay out of the command line.
func TestSecretFlagsReadFilesAndTheEnvironment(t *testing.T) {
	dir := t.TempDir()
	proxy := filepath.Join(dir, "proxy")
	headers := filepath.Join(dir, "headers")
	if err := os.WriteFile(proxy, []byte("http://u:p4ss@proxy.test:3128\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(headers, []byte("# the API\nX-Api-Key: k1\n\nAccept-Language: de\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TEST_PROXY", "socks5://u:p@proxy.test:1080")
	for in, want := range map[string]string{"@" + proxy: "http://u:p4ss@proxy.test:3128", "env:TEST_PROXY": "socks5://u:p@proxy.test:1080",
		"http://plain.test:3128": "http://plain.test:3128"} {
		if got, err := secretArg("--crawl-proxy", in); err != nil || got != want {
			t.Errorf("%s: %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := secretArg("--crawl-proxy", "env:TEST_UNSET_VARIABLE"); err == nil {
		t.Error("an unset variable was taken as an empty proxy")
	}
	got, err := headerLines([]string{"Accept: text/html", "@" + headers})
	if err != nil || !slices.Equal(got, []string{"Accept: text/html", "X-Api-Key: k1", "Accept-Language: de"}) {
		t.Errorf("headers: %q, %v", got, err)
	}
	if _, err := headerLines([]string{"@" + filepath.Join(dir, "missing")}); err == nil {
		t.Error("a missing header file was not an error")
	}
}
