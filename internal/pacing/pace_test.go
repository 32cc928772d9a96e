package pacing

import (
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
)

// A crawl's throttle slows its pacing and never speeds it up.
func TestSpecPacingWithThrottle(t *testing.T) {
	s := crawl.Spec{Delay: crawl.Duration(2 * time.Second), Concurrency: 4}
	for _, c := range []struct {
		th    *crawl.Throttle
		delay time.Duration
		conc  int
	}{
		{nil, 2 * time.Second, 4},
		{&crawl.Throttle{Delay: crawl.Duration(5 * time.Second)}, 5 * time.Second, 4},
		{&crawl.Throttle{Delay: crawl.Duration(time.Second)}, 2 * time.Second, 4},
		{&crawl.Throttle{Concurrency: 1}, 2 * time.Second, 1},
		{&crawl.Throttle{Concurrency: 8}, 2 * time.Second, 4},
	} {
		s.Throttle = c.th
		if p := OfCrawl(s); p.Delay != c.delay || p.Concurrency != c.conc {
			t.Errorf("throttle %+v: %+v, want %v %d", c.th, p, c.delay, c.conc)
		}
	}
}

// The one pacing rule: the largest delay and the smallest concurrency of every pace that
// applies, a concurrency of 0 setting no limit of its own; robots.txt's Crawl-delay is capped.
func TestSlowestPaceHolds(t *testing.T) {
	for _, c := range []struct {
		paces []Pace
		want  Pace
	}{
		{nil, Pace{}},
		{[]Pace{{Delay: time.Second, Concurrency: 4}}, Pace{Delay: time.Second, Concurrency: 4}},
		{[]Pace{{Delay: time.Second, Concurrency: 4}, {Delay: 3 * time.Second}}, Pace{Delay: 3 * time.Second, Concurrency: 4}},
		{[]Pace{{Delay: 2 * time.Second}, {Concurrency: 2}, {Delay: time.Second, Concurrency: 3}}, Pace{Delay: 2 * time.Second, Concurrency: 2}},
		{[]Pace{{Delay: time.Second}, CrawlDelayPace(time.Hour)}, Pace{Delay: time.Hour}}, // never faster than asked
	} {
		if got := Slowest(c.paces...); got != c.want {
			t.Errorf("Slowest(%+v) = %+v, want %+v", c.paces, got, c.want)
		}
	}
	// Over a crawl's cap, the host is skipped (the reason crawl.SkipCrawlDelay), not paced at the cap.
	if !CrawlDelayOver(45*time.Second, 30*time.Second) || CrawlDelayOver(45*time.Second, time.Minute) || CrawlDelayOver(time.Hour, 0) {
		t.Error("CrawlDelayOver")
	}
}
