package failpoint

import "testing"

func TestHitKillsOnTheNthHitOnly(t *testing.T) {
	kills := 0
	old := kill
	kill = func() { kills++ }
	t.Cleanup(func() { kill = old; _ = Arm("") })
	if err := Arm("fetch-recorded#3, links-admitted"); err != nil {
		t.Fatal(err)
	}
	Hit(FetchRecorded)
	Hit(FetchRecorded)
	if kills != 0 {
		t.Fatalf("killed before the third hit")
	}
	Hit(FetchRecorded)
	Hit(LinksAdmitted)
	Hit(DocumentSaved)
	Hit(FetchRecorded)
	if kills != 2 {
		t.Fatalf("kills = %d, want 2 (third fetch-recorded, first links-admitted)", kills)
	}
	for _, bad := range []string{"x#0", "x#y", "x#-1"} {
		if err := Arm(bad); err == nil {
			t.Errorf("Arm(%q) accepted", bad)
		}
	}
	if err := Arm(""); err != nil || armed.Load() {
		t.Fatalf("empty spec: armed=%v err=%v", armed.Load(), err)
	}
}
