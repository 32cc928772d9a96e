package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Bad input gets a clear error naming what is wrong, before any connection is tried (the
// Temporal address points nowhere, so a dial would fail differently).
func TestBadInputIsRefusedClearly(t *testing.T) {
	t.Setenv("TEMPORAL_ADDRESS", "127.0.0.1:1")
	// The address guard as shipped: a loopback proxy is refused.
	t.Setenv("TRAWLER_ALLOW_NETWORKS", "")
	t.Setenv("TRAWLER_PROXY", "")
	t.Setenv("TRAWLER_CONNECT_TO", "")
	t.Setenv("DATABASE_URL", "postgres://nobody@127.0.0.1:1/none")
	bad := filepath.Join(t.TempDir(), "bad.json")
	_ = os.WriteFile(bad, []byte(`{"seeds": [`), 0o644)
	typo := filepath.Join(t.TempDir(), "typo.json")
	_ = os.WriteFile(typo, []byte(`{"seeds": ["http://a.test/"], "maxpages": 10}`), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"crawl", "--max-pages", "-5", "http://a.test/"}, "maxPages: must not be negative"},
		{[]string{"crawl", "--delay", "soon", "http://a.test/"}, `invalid value "soon"`},
		{[]string{"crawl", "mailto:x@example.com"}, "no valid seed URL"},
		{[]string{"crawl", "--spec", bad}, bad},
		{[]string{"crawl", "--spec", filepath.Join(t.TempDir(), "missing.json")}, "missing.json"},
		{[]string{"crawl", "--scope", "galaxy", "http://a.test/"}, `scope: "galaxy"`},
		{[]string{"crawl", "--spec", typo}, "maxpages: unknown field; did you mean maxPages?"},
		{[]string{"crawl", "--max-duration", "-1h", "http://a.test/"}, "maxDuration: must not be negative"},
		{[]string{"crawl", "--max-bytes", "-5", "http://a.test/"}, "maxBytes: must not be negative"},
		{[]string{"crawl", "--auto-throttle", "-1", "http://a.test/"}, "autoThrottle: -1 is outside 0–100"},
		{[]string{"crawl", "--politeness-key", "ip", "http://a.test/"}, `politenessKey: "ip" is not host or domain`},
		{[]string{"crawl", "--header", "Range: bytes=0-9", "http://a.test/"}, "headers: Range may not be set"},
		{[]string{"crawl", "--header", "X-Key: 1", "--header", "x-key: 2", "http://a.test/"}, `name one header`},
		{[]string{"crawl", "--robots-override", "co.uk", "http://a.test/"}, `robotsOverride: "co.uk" is a public suffix`},
		{[]string{"crawl", "--crawl-proxy", "ftp://p.test:21", "http://a.test/"}, "proxy: \"ftp://p.test:21\": the scheme must be http, https or socks5"},
		{[]string{"crawl", "--crawl-proxy", "http://p.test", "http://a.test/"}, "name the proxy's host and port"},
		{[]string{"crawl", "--crawl-proxy", "http://127.0.0.1:3128", "http://a.test/"}, "proxy http://127.0.0.1:3128: the address guard refuses it"},
		{[]string{"crawl", "--robots-override", "http://a.test/", "http://a.test/"}, `robotsOverride: "http://a.test/" is not a host name`},
		{[]string{"crawl", "--allow-pattern", "/docs/(", "http://a.test/"}, `allowPatterns: "/docs/("`},
		{[]string{"crawl", "--header", "Accept-Language de", "http://a.test/"}, `give "Name: value"`},
		{[]string{"crawl", "--header", "Cookie: session=1", "http://a.test/"}, "headers: Cookie may not be set"},
		{[]string{"crawl", "--header", "X-Key: a\nb", "http://a.test/"}, "headers: X-Key: its value has characters"},
		{[]string{"dlq"}, "usage: trawler dlq list|replay"},
		{[]string{"delete"}, "name a crawl (--crawl NAME) or an age"},
		{[]string{"export"}, "export: name the crawl"},
		{[]string{"report"}, "report: --crawl is required"},
		{[]string{"report", "--crawl", "c", "--out", "main.go"}, "is not a directory"},
		{[]string{"export", "--crawl", "c", "--format", "xml"}, `format "xml": want one of jsonl, csv, parquet`},
		{[]string{"export", "--crawl", "c", "--fields", "url,body"}, `field "body"`},
		{[]string{"export", "--crawl", "c", "--since", "yesterday"}, "want RFC 3339"},
		{[]string{"delete", "--crawl", "c", "--older-than", "1h"}, "exclude each other"},
		{[]string{"delete", "--older-than", "-1h"}, "want a positive age"},
		{[]string{"delete", "--crawl", "c", "extra"}, "unexpected arguments"},
		{[]string{"crawl", "--dedup-against", "a/b", "http://a.test/"}, `dedupAgainst: "a/b" is not a crawl name`},
		{[]string{"warc"}, "--crawl is required"},
		{[]string{"warc", "--crawl", "c", "--url", "http://a.test/", "--at", "yesterday"}, "want RFC 3339"},
		{[]string{"seed", "--crawl", "c"}, "usage: trawler seed"},
		{[]string{"seed", "--crawl", "c", "ftp://a.test/"}, "not an http(s) URL"},
		{[]string{"block", "--crawl", "c"}, "give at least one host or pattern"},
		{[]string{"block", "--crawl", "c", "--pattern", "("}, "pattern"},
		{[]string{"block", "--host", "a.test"}, "--crawl is required"},
		{[]string{"status", "--every", "often"}, `invalid value "often"`},
	} {
		var out bytes.Buffer
		err := dispatch(context.Background(), c.args, &out)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("trawler %v: %v; want an error containing %q", c.args, err, c.want)
		}
	}
}
