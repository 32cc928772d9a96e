// Package traps owns the crawler-trap rules applied when a link is admitted: URLs that are too
// deep, that repeat path segments, that walk a calendar far from today, or that carry a
// session-id-looking parameter the normalizer did not know. Each rejection has a reason, and the
// reasons are counted per crawl.
package traps

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Reasons a URL is rejected (also the admission stats' keys).
const (
	ReasonPathDepth = "trap: path too deep"
	ReasonRepeats   = "trap: repeating path segments"
	ReasonCalendar  = "trap: calendar far from today"
	ReasonSession   = "trap: session id"
)

// Rules are the limits. Zero fields take the defaults of Default.
type Rules struct {
	MaxPathDepth   int // path segments
	MaxRepeats     int // times one segment may appear in a path
	CalendarYears  int // years away from today a date-like path or query may be
	SessionMinChar int // length from which an id-like value of a session-ish parameter counts
}

// Default are generous limits real sites rarely reach.
func Default() Rules {
	return Rules{MaxPathDepth: 16, MaxRepeats: 3, CalendarYears: 3, SessionMinChar: 16}
}

var (
	yearPattern  = regexp.MustCompile(`(?:^|[/=_-])((?:19|20|21)\d\d)(?:[/_-](0?[1-9]|1[0-2]))?(?:$|[/&_-])`)
	sessionParam = regexp.MustCompile(`(?i)(sess|sid|token|jsession|phpsess|aspsession|cfid|cftoken|visitor|tracking)`)
	idValue      = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
)

// Check returns why u looks like a trap, or "".
func (r Rules) Check(u *url.URL, now time.Time) string {
	def := Default()
	if r.MaxPathDepth <= 0 {
		r.MaxPathDepth = def.MaxPathDepth
	}
	if r.MaxRepeats <= 0 {
		r.MaxRepeats = def.MaxRepeats
	}
	if r.CalendarYears <= 0 {
		r.CalendarYears = def.CalendarYears
	}
	if r.SessionMinChar <= 0 {
		r.SessionMinChar = def.SessionMinChar
	}
	path := u.EscapedPath()
	segs := strings.FieldsFunc(path, func(c rune) bool { return c == '/' })
	if len(segs) > r.MaxPathDepth {
		return ReasonPathDepth
	}
	if repeats(segs) > r.MaxRepeats {
		return ReasonRepeats
	}
	for _, part := range []string{path, u.RawQuery} {
		if !hasFourDigits(part) {
			continue // (a year is four digits: most links have none, and skip the expression)
		}
		for _, m := range yearPattern.FindAllStringSubmatch(part, -1) {
			year, _ := strconv.Atoi(m[1])
			if d := year - now.Year(); d > r.CalendarYears || -d > r.CalendarYears {
				return ReasonCalendar
			}
		}
	}
	if u.RawQuery == "" {
		return ""
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

// repeats is how often the most repeated segment appears. A path of the default depth or
// less is compared pairwise, without a map a link; a crawl may allow deeper paths, which a
// map keeps linear.
func repeats(segs []string) int {
	most := 0
	if len(segs) <= 2*Default().MaxPathDepth {
		for i, s := range segs {
			n := 1
			for _, t := range segs[:i] {
				if t == s {
					n++
				}
			}
			most = max(most, n)
		}
		return most
	}
	count := make(map[string]int, len(segs))
	for _, s := range segs {
		count[s]++
		most = max(most, count[s])
	}
	return most
}

// hasFourDigits says whether s holds four ASCII digits in a row.
func hasFourDigits(s string) bool {
	run := 0
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			if run++; run == 4 {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}

func hasDigitAndLetter(s string) bool {
	var d, l bool
	for _, c := range s {
		d = d || c >= '0' && c <= '9'
		l = l || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
	}
	return d && l
}
