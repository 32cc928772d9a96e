package crawl

import (
	"strings"
	"time"
)

// Recrawl is the recrawl policy. A zero Interval means fetch each page once. Otherwise every
// URL is fetched again after an interval that adapts to what it does: a fetch that finds the
// page changed halves the interval, one that finds it unchanged (a 304, or the same content
// hash) multiplies it by 1.5, always within [MinInterval, MaxInterval]. A sitemap's
// <changefreq> sets a URL's first interval; a page answering 404 or 410 GoneAfter times in a
// row is not fetched again.
type Recrawl struct {
	Interval    Duration `json:"interval,omitempty"`    // first interval of a URL
	MinInterval Duration `json:"minInterval,omitempty"` // default Interval/4
	MaxInterval Duration `json:"maxInterval,omitempty"` // default 8·Interval
	GoneAfter   int      `json:"goneAfter,omitempty"`   // consecutive 404/410 answers that end a URL (default 2)
}

func (r Recrawl) withDefaults() Recrawl {
	if r.Interval <= 0 {
		return r
	}
	if r.MinInterval == 0 {
		r.MinInterval = r.Interval / 4
	}
	if r.MaxInterval == 0 {
		r.MaxInterval = 8 * r.Interval
	}
	if r.GoneAfter == 0 {
		r.GoneAfter = 2
	}
	return r
}

// Change is what a fetch found, for the recrawl schedule.
type Change int

// What a fetch found.
const (
	FirstFetch Change = iota // nothing to compare with
	Changed
	Unchanged
)

// Next returns a URL's next interval given its current one (0: none yet), what this fetch
// found and its sitemap's changefreq hint (0: none). Zero means no recrawl.
func (r Recrawl) Next(current time.Duration, change Change, hint time.Duration) time.Duration {
	r = r.withDefaults()
	if r.Interval <= 0 {
		return 0
	}
	d := current
	switch {
	case d <= 0 && hint > 0:
		d = hint
	case d <= 0:
		d = r.Interval.D()
	case change == Changed:
		d /= 2
	case change == Unchanged:
		d += d / 2
	}
	return min(max(d, r.MinInterval.D()), r.MaxInterval.D())
}

// ChangeFreqInterval maps a sitemap <changefreq> to an interval (0 for an unknown value).
func ChangeFreqInterval(freq string) time.Duration {
	switch strings.ToLower(strings.TrimSpace(freq)) {
	case "always":
		return time.Minute // clamped to the policy's MinInterval
	case "hourly":
		return time.Hour
	case "daily":
		return 24 * time.Hour
	case "weekly":
		return 7 * 24 * time.Hour
	case "monthly":
		return 30 * 24 * time.Hour
	case "yearly":
		return 365 * 24 * time.Hour
	case "never":
		return 100 * 365 * 24 * time.Hour // clamped to MaxInterval: archived pages are still checked now and then
	}
	return 0
}
