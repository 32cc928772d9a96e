package crawl

import (
	"testing"
	"time"
)

// A host's pacing takes the spec's defaults without a round trip through a Spec: a bare
// HostConfig gets what a bare crawl would give it, and what is set stays.
func TestHostConfigDefaultsAreTheSpecs(t *testing.T) {
	if got, want := (HostConfig{}).WithDefaults(), HostConfigFrom(Spec{}.WithDefaults()); got != want {
		t.Errorf("HostConfig defaults %+v, a crawl's %+v", got, want)
	}
	set := HostConfig{Delay: Duration(3 * time.Second), MaxBatch: 7, FetchQueue: "q"}.WithDefaults()
	if set.Delay.D() != 3*time.Second || set.MaxBatch != 7 || set.FetchQueue != "q" || set.Concurrency != 1 {
		t.Errorf("set fields changed or unset ones left zero: %+v", set)
	}
}

// A crawl's throttle slows its pacing and never speeds it up.
func TestSpecPacingWithThrottle(t *testing.T) {
	s := Spec{Delay: Duration(2 * time.Second), Concurrency: 4}
	for _, c := range []struct {
		th    *Throttle
		delay time.Duration
		conc  int
	}{
		{nil, 2 * time.Second, 4},
		{&Throttle{Delay: Duration(5 * time.Second)}, 5 * time.Second, 4},
		{&Throttle{Delay: Duration(time.Second)}, 2 * time.Second, 4},
		{&Throttle{Concurrency: 1}, 2 * time.Second, 1},
		{&Throttle{Concurrency: 8}, 2 * time.Second, 4},
	} {
		s.Throttle = c.th
		if p := s.Pace(); p.Delay != c.delay || p.Concurrency != c.conc {
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
	// Over a crawl's cap, the host is skipped (the reason SkipCrawlDelay), not paced at the cap.
	if !CrawlDelayOver(45*time.Second, 30*time.Second) || CrawlDelayOver(45*time.Second, time.Minute) || CrawlDelayOver(time.Hour, 0) {
		t.Error("CrawlDelayOver")
	}
}
