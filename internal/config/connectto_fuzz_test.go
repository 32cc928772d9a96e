package config

import (
	"strings"
	"testing"
	"time"
)

// Connect-to rules come from an operator's setting: any string is parsed quickly into rules
// that each name a pattern and a HOST:PORT, or refused with an error.
func FuzzParseConnectTo(f *testing.F) {
	for _, s := range []string{"*.test=127.0.0.1:18080", "a.test=[::1]:80,*=10.0.0.1:1", "*x=1:1", "=", ",,,", "a=b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		start := time.Now()
		rules, err := ParseConnectTo(v)
		if d := time.Since(start); d > 250*time.Millisecond+time.Duration(len(v))*time.Microsecond {
			t.Fatalf("%d bytes took %v", len(v), d)
		}
		if err != nil {
			return
		}
		for _, r := range rules {
			if r.Pattern == "" || !strings.Contains(r.Address, ":") {
				t.Fatalf("rule %+v from %q", r, v)
			}
			if !strings.HasPrefix(r.Pattern, "*") && !r.Match(r.Pattern) {
				t.Fatalf("rule %+v does not match its own host", r)
			}
		}
	})
}
