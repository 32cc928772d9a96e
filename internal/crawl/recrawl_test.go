package crawl

import (
	"testing"
	"time"
)

func TestRecrawlAdaptsWithinBounds(t *testing.T) {
	r := Recrawl{Interval: Duration(time.Hour)}
	if got := (Recrawl{}).Next(time.Hour, Changed, 0); got != 0 {
		t.Fatalf("no policy, next %v", got)
	}
	steps := []struct {
		current time.Duration
		change  Change
		hint    time.Duration
		want    time.Duration
	}{
		{0, FirstFetch, 0, time.Hour},                              // the policy's interval
		{0, FirstFetch, 24 * time.Hour, 8 * time.Hour},             // a daily changefreq, capped at 8×
		{0, FirstFetch, time.Minute, 15 * time.Minute},             // "always", floored at ¼
		{time.Hour, Changed, 0, 30 * time.Minute},                  // changed: halved
		{time.Hour, Unchanged, 0, 90 * time.Minute},                // unchanged: ×1.5
		{20 * time.Minute, Changed, 0, 15 * time.Minute},           // floor
		{7 * time.Hour, Unchanged, 0, 8 * time.Hour},               // ceiling
		{time.Hour, Unchanged, 10 * time.Minute, 90 * time.Minute}, // a hint only seeds the first interval
	}
	for _, s := range steps {
		if got := r.Next(s.current, s.change, s.hint); got != s.want {
			t.Errorf("Next(%v, %v, %v) = %v, want %v", s.current, s.change, s.hint, got, s.want)
		}
	}
	if ChangeFreqInterval("Weekly ") != 7*24*time.Hour || ChangeFreqInterval("sometimes") != 0 {
		t.Error("changefreq mapping")
	}
	spec := Spec{Seeds: []string{"http://a.test/"}, Recrawl: Recrawl{Interval: Duration(time.Hour), MinInterval: Duration(2 * time.Hour), MaxInterval: Duration(30 * time.Minute)}}.WithDefaults()
	if err := spec.Validate(); err == nil {
		t.Error("minInterval above maxInterval accepted")
	}
	spec = Spec{Seeds: []string{"http://a.test/"}, NearDup: NearDup{SimHashBits: 4}}.WithDefaults()
	if err := spec.Validate(); err == nil {
		t.Error("simhashBits 4 accepted")
	}
}
