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
		if d, n := s.Pacing(); d != c.delay || n != c.conc {
			t.Errorf("throttle %+v: %v %d, want %v %d", c.th, d, n, c.delay, c.conc)
		}
	}
}
