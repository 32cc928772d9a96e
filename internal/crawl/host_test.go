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
