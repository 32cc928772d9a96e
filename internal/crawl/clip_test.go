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
	if len(got) > 100 || !utf8.ValidString(got) || !strings.HasSuffix(got, "[cut 2000 bytes]") || !strings.HasPrefix(got, "éé") {
		t.Errorf("clipped to %d bytes, valid %v: %q", len(got), utf8.ValidString(got), got)
	}
	if got := ClipError(strings.Repeat("x", 900<<10)); len(got) > MaxErrorBytes {
		t.Errorf("a 900 KiB error clipped to %d bytes", len(got))
	}
	if Validator(strings.Repeat("v", MaxValidatorBytes+1)) != "" || Validator(`"abc"`) != `"abc"` {
		t.Error("an over-cap validator is dropped, a normal one kept")
	}
}
