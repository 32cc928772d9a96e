package traps

import (
	"math/rand/v2"
	"net/url"
	"strconv"
	"strings"
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

// checkByMaps is Check as it was first written (a count map of segments, the year expression
// over every path and query): what the cheaper Check must answer alike.
func checkByMaps(r Rules, u *url.URL, now time.Time) string {
	segs := strings.FieldsFunc(u.EscapedPath(), func(c rune) bool { return c == '/' })
	if len(segs) > r.MaxPathDepth {
		return ReasonPathDepth
	}
	count := map[string]int{}
	for _, s := range segs {
		count[s]++
		if count[s] > r.MaxRepeats {
			return ReasonRepeats
		}
	}
	for _, part := range []string{u.EscapedPath(), u.RawQuery} {
		for _, m := range yearPattern.FindAllStringSubmatch(part, -1) {
			year, _ := strconv.Atoi(m[1])
			if d := year - now.Year(); d > r.CalendarYears || -d > r.CalendarYears {
				return ReasonCalendar
			}
		}
	}
	for name, values := range u.Query() {
		if !sessionParam.MatchString(name) {
			continue
		}
		for _, v := range values {
			if len(v) >= r.SessionMinChar && idValue.MatchString(v) && hasDigitAndLetter(v) {
				return ReasonSession
			}
		}
	}
	return ""
}

// Check answers as checkByMaps on random links built of the parts traps look at: repeated
// segments, years near and far with and without months, digit runs of every length, session
// parameters and plain ones.
func TestCheckAgreesWithItsFirstForm(t *testing.T) {
	segs := []string{"a", "b", "news", "2026", "1999", "2031", "2026-11", "12", "123", "12345", "x_2019_y", "%2F", "café", "cal", "2026_13"}
	params := []string{"q=1", "sid=abcd1234efgh5678ij", "sessionid=short1", "y=2050", "page=3", "d=2024-02", "token=ABCDEFGH12345678", "z=12345"}
	now := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	r := Default()
	rng := rand.New(rand.NewPCG(5, 6))
	hits := map[string]int{}
	for range 20000 {
		var b strings.Builder
		b.WriteString("http://h.test")
		for range rng.IntN(20) {
			b.WriteString("/" + segs[rng.IntN(len(segs))])
		}
		if rng.IntN(2) == 0 {
			for i := range rng.IntN(4) {
				b.WriteString([]string{"?", "&"}[min(i, 1)] + params[rng.IntN(len(params))])
			}
		}
		u, err := url.Parse(b.String())
		if err != nil {
			continue
		}
		got, want := r.Check(u, now), checkByMaps(r, u, now)
		if got != want {
			t.Fatalf("%s: %q, want %q", u, got, want)
		}
		hits[got]++
	}
	deep := Rules{MaxPathDepth: 1000, MaxRepeats: 3, CalendarYears: 3, SessionMinChar: 16} // (deeper than pairwise goes)
	for _, n := range []int{31, 32, 33, 200} {
		var b strings.Builder
		b.WriteString("http://h.test")
		for i := range n {
			b.WriteString("/" + segs[i%len(segs)])
		}
		u, _ := url.Parse(b.String())
		if got, want := deep.Check(u, now), checkByMaps(deep, u, now); got != want {
			t.Fatalf("%d segments: %q, want %q", n, got, want)
		}
	}
	for _, why := range []string{"", ReasonPathDepth, ReasonRepeats, ReasonCalendar, ReasonSession} {
		if hits[why] == 0 {
			t.Errorf("no link was answered %q: the test does not reach every rule", why)
		}
	}
}

// BenchmarkCheck is Check over a page's worth of ordinary links (no trap among them).
func BenchmarkCheck(b *testing.B) {
	var links []*url.URL
	for _, raw := range []string{"http://h.test/", "http://h.test/news/world/a-story-about-things", "http://h.test/about",
		"http://h.test/p/12?ref=home", "http://h.test/blog/2026/11/post-title", "http://h.test/search?q=crawler&page=2",
		"http://h.test/tag/go", "http://h.test/static/css/site.css"} {
		u, _ := url.Parse(raw)
		links = append(links, u)
	}
	now, r := time.Now(), Default()
	b.ReportAllocs()
	for b.Loop() {
		for _, u := range links {
			r.Check(u, now)
		}
	}
}
