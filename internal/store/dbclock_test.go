package store

import (
	"testing"
	"time"
)

// The estimate keeps its tightest reading, ignores looser ones that agree with it, follows a
// clock that stepped at once, and applies nothing it cannot tell from zero.
func TestDBClockKeepsTheTightestReadingAndFollowsASkew(t *testing.T) {
	var c dbClock
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	if _, ok := c.offset(); ok {
		t.Fatal("an estimate before any reading")
	}
	// The database's clock 2 s ahead; read within a 10 ms round trip.
	c.observe(at(0), at(2005), at(10))
	if off, ok := c.offset(); !ok || off != 2*time.Second {
		t.Fatalf("offset %v (%v), want 2s", off, ok)
	}
	// A tighter reading refines it.
	c.observe(at(20), at(2021), at(22))
	if off, _ := c.offset(); off != 2*time.Second {
		t.Fatalf("after a tighter reading: %v", off)
	}
	// A looser reading that agrees with it does not move it.
	c.observe(at(30), at(2080), at(90))
	if off, _ := c.offset(); off != 2*time.Second {
		t.Fatalf("a loose reading moved the estimate to %v", off)
	}
	// The local clock stepped 3 s forward (an NTP correction): the next reading, however
	// loose, cannot agree with the estimate and replaces it.
	c.observe(at(3100), at(2120), at(3140))
	if off, _ := c.offset(); off < -1000*time.Millisecond || off > -960*time.Millisecond {
		t.Fatalf("after a step of the local clock: %v, want about -1s", off)
	}
	// Clocks that agree within the reading's own error convert nothing.
	var same dbClock
	same.observe(at(0), at(1), at(1))
	if off, ok := same.offset(); !ok || off != 0 {
		t.Fatalf("agreeing clocks: offset %v", off)
	}
	if got := same.toDB(at(5)); !got.Equal(at(5)) {
		t.Fatalf("toDB on agreeing clocks: %v", got)
	}
	if !c.toDB(time.Time{}).IsZero() || !c.fromDB(time.Time{}).IsZero() {
		t.Fatal("a zero time converted")
	}
}
