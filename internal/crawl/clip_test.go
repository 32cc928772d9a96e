package crawl

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClipKeepsValidTextUnderTheCap(t *testing.T) {
	if got := Clip("short", 10); got != "short" {
		t.Errorf("a string that fits is kept: %q", got)
	}
	long := strings.Repeat("é", 1000) // two bytes each: a cut must not split one
	got := Clip(long, 100)
	if len(got) > 100 || !utf8.ValidString(got) || !strings.Contains(got, "[cut 2000 bytes]") || !strings.HasPrefix(got, "éé") || !strings.HasSuffix(got, "éé") {
		t.Errorf("clipped to %d bytes, valid %v: %q", len(got), utf8.ValidString(got), got)
	}
	// The cause of an error about a long URL is its last words: they stay.
	msg := "fetch http://a.test/" + strings.Repeat("p", 2000) + ": request timed out"
	if got := ClipError(msg); !strings.HasSuffix(got, "request timed out") || !strings.HasPrefix(got, "fetch http://a.test/") {
		t.Errorf("the cause was cut: %q", got)
	}
	if got := Clip(long, 5); len(got) > 5 || !utf8.ValidString(got) {
		t.Errorf("no room for the mark: %q", got)
	}
	if got := ClipError(strings.Repeat("x", 900<<10)); len(got) > MaxErrorBytes {
		t.Errorf("a 900 KiB error clipped to %d bytes", len(got))
	}
	if Validator(strings.Repeat("v", MaxValidatorBytes+1)) != "" || Validator(`"abc"`) != `"abc"` {
		t.Error("an over-cap validator is dropped, a normal one kept")
	}
}
