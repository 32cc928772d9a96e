package traps

import (
	"net/url"
	"testing"
	"time"
)

func TestCheck(t *testing.T) {
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	for raw, want := range map[string]string{
		"http://x.test/":        "",
		"http://x.test/a/b/c/d": "",
		"http://x.test/1/2/3/4/5/6/7/8/9/10/11/12/13/14/15/16/17": ReasonPathDepth,
		"http://x.test/a/b/a/b/a/b/":                              "",
		"http://x.test/a/b/a/b/a/b/a/b/":                          ReasonRepeats,
		"http://x.test/calendar/2026/11":                          "",
		"http://x.test/calendar/2029/1":                           "",
		"http://x.test/calendar/2031/1":                           ReasonCalendar,
		"http://x.test/events?date=1998-04":                       ReasonCalendar,
		"http://x.test/archive/2024/05/post.html":                 "",
		"http://x.test/p/2100.html":                               "", // a number, not a date segment
		"http://x.test/cart?sessid=a9f8e7d6c5b4a3f2e1d0":          ReasonSession,
		"http://x.test/cart?token=abc":                            "",
		"http://x.test/cart?sid=aaaaaaaaaaaaaaaaaaaa":             "", // no digits: not an id
		"http://x.test/search?q=a9f8e7d6c5b4a3f2e1d0":             "",
	} {
		u, _ := url.Parse(raw)
		if got := Default().Check(u, now); got != want {
			t.Errorf("Check(%s) = %q, want %q", raw, got, want)
		}
	}
}
