package fetching

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/store"
)

// A jar keeps one line per cookie, saves only what changed, keeps nothing for a deletion or a
// malformed header, and holds its newest cookies within the caps: a site that sets a new
// cookie on every page does not push out a session cookie it set once and sets again.
func TestTheJarKeepsOneLinePerCookieWithinItsCaps(t *testing.T) {
	j := newCookieJar("c", "a.test", nil)
	var saves [][]store.SetCookie
	save := func(_ context.Context, keep []store.SetCookie) error { saves = append(saves, keep); return nil }
	at := time.Now()
	rec := func(lines ...string) {
		if err := j.record(context.Background(), "http://a.test/dir/page", lines, at, save); err != nil {
			t.Fatal(err)
		}
	}
	rec("session=s1; Path=/")
	rec("session=s1; Path=/") // the same again: nothing to save
	if len(saves) != 1 {
		t.Fatalf("%d saves; want one (the second header changed nothing)", len(saves))
	}
	rec("session=s2; Path=/", "junk-without-equals", "gone=1; Max-Age=-1")
	if last := saves[len(saves)-1]; len(last) != 1 || last[0].Line != "session=s2; Path=/" {
		t.Fatalf("jar %+v; want the one session line, replaced", last)
	}
	for i := range 100 {
		rec(fmt.Sprintf("track%d=%d", i, i), "session=s2; Path=/")
	}
	last := saves[len(saves)-1]
	if len(last) > maxJarCookies {
		t.Errorf("%d lines kept; the cap is %d", len(last), maxJarCookies)
	}
	if got := j.send("http://a.test/x"); len(got) == 0 {
		t.Error("nothing sent")
	}
	// What the next worker rebuilds from still holds the session cookie.
	rebuilt := newCookieJar("c", "a.test", last)
	found := false
	for _, c := range rebuilt.send("http://a.test/") {
		found = found || (c.Name == "session" && c.Value == "s2")
	}
	if !found {
		t.Error("the saved jar lost the session cookie to a hundred others")
	}
	huge := newCookieJar("c", "a.test", []store.SetCookie{{URL: "http://a.test/", Line: "forever=1; Max-Age=99999999999999", At: at}})
	if len(huge.send("http://a.test/")) != 1 {
		t.Error("a cookie with an enormous Max-Age was dropped (overflow) instead of capped")
	}
}
