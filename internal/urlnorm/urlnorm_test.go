package urlnorm

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestNormalize(t *testing.T) {
	n := New(Default())
	cases := []struct{ in, want string }{
		// RFC 3986 §6.2.2 syntax-based normalization.
		{"HTTP://www.Example.com/", "http://www.example.com/"},
		{"http://example.com/%7Esmith/home.html", "http://example.com/~smith/home.html"},
		{"http://example.com/%7esmith", "http://example.com/~smith"},
		{"http://example.com/a%2fb", "http://example.com/a%2Fb"},
		{"http://example.com/a/./b/../c", "http://example.com/a/c"},
		{"http://example.com/../a", "http://example.com/a"},
		{"http://example.com/a/b/..", "http://example.com/a/"},
		{"http://example.com/a/.", "http://example.com/a/"},
		// §6.2.3 scheme-based normalization.
		{"http://example.com", "http://example.com/"},
		{"http://example.com:80/", "http://example.com/"},
		{"https://example.com:443/x", "https://example.com/x"},
		{"http://example.com:8080/", "http://example.com:8080/"},
		{"https://example.com:80/", "https://example.com:80/"},
		{"http://example.com:/", "http://example.com/"},
		{"http://example.com.", "http://example.com/"},
		// Fragments, queries, parameters.
		{"http://example.com/p#frag", "http://example.com/p"},
		{"http://example.com/p?b=2&a=1", "http://example.com/p?a=1&b=2"},
		{"http://example.com/p?utm_source=x&id=3&utm_medium=y", "http://example.com/p?id=3"},
		{"http://example.com/p?fbclid=1", "http://example.com/p"},
		{"http://example.com/p?PHPSESSID=abc&q=1", "http://example.com/p?q=1"},
		{"http://example.com/p?q=a%20b", "http://example.com/p?q=a%20b"},
		{"http://example.com/p?q=%7e", "http://example.com/p?q=~"},
		{"http://example.com/p?", "http://example.com/p"},
		{"http://example.com/p?a=1;b=2", "http://example.com/p?a=1&b=2"},
		// Hosts.
		{"http://bücher.example/", "http://xn--bcher-kva.example/"},
		{"http://XN--BCHER-KVA.example/", "http://xn--bcher-kva.example/"},
		{"http://[::1]:8080/", "http://[::1]:8080/"},
		{"http://[2001:DB8::1]/", "http://[2001:db8::1]/"},
		{"http://192.168.0.1/", "http://192.168.0.1/"},
		{"http://my_host.example/", "http://my_host.example/"},
		// Raw characters that must be encoded.
		{"http://example.com/a b", "http://example.com/a%20b"},
		{"http://example.com/ü", "http://example.com/%C3%BC"},
		{"  http://example.com/x  ", "http://example.com/x"},
		{"http://example.com/100%/x%zz", "http://example.com/100%25/x%25zz"},
		// RFC 3986 §6.2.2 examples and more equivalences.
		{"http://example.com/%7Bfoo%7D", "http://example.com/%7Bfoo%7D"},
		{"http://example.com/%7bfoo%7d", "http://example.com/%7Bfoo%7D"},
		{"http://example.com/a/./b/../b/%63/%7bfoo%7d", "http://example.com/a/b/c/%7Bfoo%7D"},
		{"http://Example.COM:0080/", "http://example.com/"},
		{"http://example.com/%41%42%43", "http://example.com/ABC"},
		{"http://example.com/a%2Fb%3Fc", "http://example.com/a%2Fb%3Fc"},
		{"http://example.com/?", "http://example.com/"},
		{"http://example.com/p?a=1&a=0", "http://example.com/p?a=0&a=1"},
		{"http://example.com/p?utm_campaign=x", "http://example.com/p"},
		{"http://example.com/p?gclid=1&x=2#top", "http://example.com/p?x=2"},
		{"http://example.com/p;jsessionid=A1B2C3", "http://example.com/p"},
		{"http://example.com/a;JSESSIONID=x/b?q=1", "http://example.com/a/b?q=1"},
		{"http://example.com/p;v=2", "http://example.com/p;v=2"},
		{"https://EXAMPLE.com./a", "https://example.com/a"},
	}
	for _, tc := range cases {
		got, err := n.Normalize(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("Normalize(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			continue
		}
		if again, _ := n.Normalize(got); again != got {
			t.Errorf("not idempotent: %q -> %q -> %q", tc.in, got, again)
		}
	}
}

func TestResolve(t *testing.T) {
	n := New(Default())
	base, _ := url.Parse("http://a/b/c/d;p?q")
	// RFC 3986 §5.4.1 normal examples (fragments dropped, as the crawler does).
	for href, want := range map[string]string{
		"g": "http://a/b/c/g", "./g": "http://a/b/c/g", "g/": "http://a/b/c/g/", "/g": "http://a/g",
		"//g": "http://g/", "?y": "http://a/b/c/d;p?y", "g?y": "http://a/b/c/g?y", "#s": "http://a/b/c/d;p?q",
		"g#s": "http://a/b/c/g", ";x": "http://a/b/c/;x", "": "http://a/b/c/d;p?q", ".": "http://a/b/c/",
		"./": "http://a/b/c/", "..": "http://a/b/", "../": "http://a/b/", "../g": "http://a/b/g",
		"../..": "http://a/", "../../g": "http://a/g", "../../../g": "http://a/g", "/./g": "http://a/g",
		"g.": "http://a/b/c/g.", ".g": "http://a/b/c/.g", "g..": "http://a/b/c/g..", "./../g": "http://a/b/g",
	} {
		got, err := n.Resolve(base, href)
		if err != nil || got != want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", href, got, err, want)
		}
	}
}

func TestRejects(t *testing.T) {
	n := New(Default())
	base, _ := url.Parse("http://example.com/")
	for href, want := range map[string]error{
		"javascript:alert(1)":    ErrScheme,
		"mailto:a@example.com":   ErrScheme,
		"tel:+123":               ErrScheme,
		"data:text/html,hi":      ErrScheme,
		"ftp://example.com/":     ErrScheme,
		"http:///nohost":         ErrNoHost,
		"http://exa mple.com/":   ErrSyntax,
		"http://example.com/%zz": nil, // escaped as %25zz, as browsers do
	} {
		_, err := n.Resolve(base, href)
		if want == nil {
			if err != nil {
				t.Errorf("Resolve(%q): %v", href, err)
			}
			continue
		}
		if !errors.Is(err, want) {
			t.Errorf("Resolve(%q) err = %v, want %v", href, err, want)
		}
	}
	long := "http://example.com/" + string(make([]byte, 0)) + repeat("a", MaxURLLength)
	if _, err := n.Normalize(long); !errors.Is(err, ErrTooLong) {
		t.Errorf("long URL: %v", err)
	}
}

func TestDefaultPagesAndAuthority(t *testing.T) {
	n := New(Options{DefaultPages: []string{"index.html"}})
	if got, _ := n.Normalize("http://x.example/a/INDEX.html"); got != "http://x.example/a/" {
		t.Errorf("default page: %q", got)
	}
	for in, want := range map[string]string{
		"http://x.example/": "x.example", "https://x.example:8443/a?b": "x.example:8443", "http://[::1]:81/": "[::1]:81",
		"http://h.test?x=1": "h.test",
	} {
		if got := Authority(in); got != want {
			t.Errorf("Authority(%q) = %q, want %q", in, got, want)
		}
	}
	if len(Hash("http://x.example/")) != 16 {
		t.Error("hash length")
	}
}

func FuzzNormalizeIsIdempotent(f *testing.F) {
	for _, s := range []string{"http://" + strings.Repeat("k", 70) + "\xec" + strings.Repeat("k", 70) + "0/%?%",
		"http://Example.com/a/../b?z=1&a=2#f", "https://bücher.example:443/%7e", "http://[::1]/a b", "http://x/%zz?%41=1"} {
		f.Add(s)
	}
	n := New(Default())
	f.Fuzz(func(t *testing.T, s string) {
		once, err := n.Normalize(s)
		if err != nil {
			return
		}
		twice, err := n.Normalize(once)
		if err != nil || twice != once {
			t.Fatalf("normalize(%q) = %q; again = %q, %v", s, once, twice, err)
		}
		// The request form is stable too, and its key is the URL's key.
		req, err := n.NormalizeRequest(s)
		if err != nil {
			return // (longer than the cap before the key rules shortened it)
		}
		if again, err := n.NormalizeRequest(req); err != nil || again != req {
			t.Fatalf("request form of %q = %q; again = %q, %v", s, req, again, err)
		}
		if key, err := n.Normalize(req); err != nil || key != once {
			t.Fatalf("key of the request form %q = %q, %v; want %q", req, key, err, once)
		}
		if !utf8.ValidString(req) || strings.ContainsRune(req, 0) {
			t.Fatalf("request form %q is not storable", req)
		}
	})
}

func repeat(s string, n int) string {
	b := make([]byte, 0, n)
	for len(b) < n {
		b = append(b, s...)
	}
	return string(b)
}

// The request form keeps the link as written, normalized only as RFC 3986 §6.2.2 allows; the
// key form (the frontier's identity) also drops and sorts parameters. robots.txt rules are
// matched against what is requested, so an Allow for one parameter order holds.
func TestRequestFormKeepsTheLinkAsWritten(t *testing.T) {
	n := New(Default())
	for raw, want := range map[string][2]string{
		"HTTP://Example.COM:80/a/./b/../c?qux=taz&baz=%7e1#frag": {"http://example.com/a/c?qux=taz&baz=~1", "http://example.com/a/c?baz=~1&qux=taz"},
		"http://example.com/p?utm_source=x&id=2":                 {"http://example.com/p?utm_source=x&id=2", "http://example.com/p?id=2"},
		"https://example.com:443":                                {"https://example.com/", "https://example.com/"},
	} {
		req, err := n.NormalizeRequest(raw)
		if err != nil || req != want[0] {
			t.Errorf("request form of %s = %q %v, want %q", raw, req, err, want[0])
		}
		key, err := n.Normalize(raw)
		if err != nil || key != want[1] {
			t.Errorf("key form of %s = %q %v, want %q", raw, key, err, want[1])
		}
		if again, _ := n.Normalize(req); again != key {
			t.Errorf("the key of the request form %q is %q, not %q", req, again, key)
		}
	}
}

// A link as a page writes it, resolved against any base: quickly, into forms that can be
// stored, that stay under the length cap, and whose key is stable.
func FuzzResolve(f *testing.F) {
	for _, s := range [][2]string{{"http://a.test/x/y", "../z?b=1&a=2#f"}, {"http://a.test/", "//B.test:80/%7e?x"},
		{"https://a.test/", "javascript:alert(1)"}, {"http://a.test/", "\x00\xff/../.."}} {
		f.Add(s[0], s[1])
	}
	n := New(Default())
	f.Fuzz(func(t *testing.T, base, href string) {
		b, err := url.Parse(base)
		if err != nil {
			return
		}
		start := time.Now()
		req, rerr := n.ResolveRequest(b, href)
		key, kerr := n.Resolve(b, href)
		if d := time.Since(start); d > 250*time.Millisecond+time.Duration(len(base)+len(href))*time.Microsecond {
			t.Fatalf("%d bytes took %v", len(base)+len(href), d)
		}
		for _, s := range []string{req, key} {
			if !utf8.ValidString(s) || strings.ContainsAny(s, "\x00\r\n ") || len(s) > MaxURLLength {
				t.Fatalf("not storable or too long: %q", s)
			}
		}
		if rerr == nil && kerr == nil {
			if again, err := n.Normalize(req); err != nil || again != key {
				t.Fatalf("key of %q = %q, %v; want %q", req, again, err, key)
			}
		}
	})
}

// Hostname takes the port and an IPv6 literal's brackets off an authority.
func TestHostname(t *testing.T) {
	for in, want := range map[string]string{"Example.COM": "example.com", "example.com:8080": "example.com",
		"[::1]:8443": "::1", "[2001:db8::1]": "2001:db8::1", "127.0.0.1:80": "127.0.0.1", "": ""} {
		if got := Hostname(in); got != want {
			t.Errorf("Hostname(%q) = %q, want %q", in, got, want)
		}
	}
}
