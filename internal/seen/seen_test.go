package seen

import (
	"fmt"
	"testing"
)

func TestApproximateSkipsOnlyWhatWasAdded(t *testing.T) {
	f := New(100_000, 1e-6, true)
	var added [][]byte
	for i := 0; i < 10_000; i++ {
		added = append(added, []byte(fmt.Sprintf("u%d", i)))
	}
	f.Add("c1", added)
	for _, h := range added {
		if !f.Skip("c1", h) {
			t.Fatal("an added key was not recognised")
		}
	}
	false_ := 0
	for i := 0; i < 10_000; i++ {
		if f.Skip("c1", []byte(fmt.Sprintf("new%d", i))) || f.Skip("c2", added[i]) {
			false_++
		}
	}
	if false_ > 1 {
		t.Errorf("%d false positives in 20,000 fresh keys at fp 1e-6", false_)
	}
	if New(10, 0.01, false).Skip("c1", added[0]) {
		t.Error("exact mode skipped")
	}
}
