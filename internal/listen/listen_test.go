package listen

import (
	"net"
	"strconv"
	"testing"
)

// freeRange finds n consecutive free ports on loopback.
func freeRange(t *testing.T, n int) int {
	t.Helper()
	for base := 20000; base < 60000; base += 97 {
		ok := true
		for p := base; p < base+n && ok; p++ {
			ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
			if err != nil {
				ok = false
				continue
			}
			ln.Close()
		}
		if ok {
			return base
		}
	}
	t.Fatal("no free port range")
	return 0
}

func TestRangeGivesEachListenerAPortOfItsOwn(t *testing.T) {
	base := freeRange(t, 3)
	addr := "127.0.0.1:" + strconv.Itoa(base) + "-" + strconv.Itoa(base+2)
	var got []string
	for range 3 {
		ln, err := TCP(addr)
		if err != nil {
			t.Fatalf("listener %d of a 3-port range: %v", len(got)+1, err)
		}
		defer ln.Close()
		got = append(got, ln.Addr().String())
	}
	for i, a := range got {
		if want := "127.0.0.1:" + strconv.Itoa(base+i); a != want {
			t.Fatalf("listener %d on %s, want %s", i+1, a, want)
		}
	}
	if ln, err := TCP(addr); err == nil {
		ln.Close()
		t.Fatal("a fourth listener on a 3-port range got a port")
	}
	// A single port that is taken is an error: the operator asked for that one.
	if ln, err := TCP(got[0]); err == nil {
		ln.Close()
		t.Fatalf("listened on %s twice", got[0])
	}
}

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in          string
		first, last int
		ok          bool
	}{
		{"127.0.0.1:9464", 9464, 9464, true},
		{":9464-9479", 9464, 9479, true},
		{"0.0.0.0:0", 0, 0, true},
		{"127.0.0.1:9479-9464", 0, 0, false},
		{"127.0.0.1:0-10", 0, 0, false},
		{"127.0.0.1:9000-9999", 0, 0, false},
		{"127.0.0.1:x", 0, 0, false},
		{"9464", 0, 0, false},
	} {
		_, first, last, err := Parse(c.in)
		if (err == nil) != c.ok || (c.ok && (first != c.first || last != c.last)) {
			t.Errorf("Parse(%q) = %d, %d, %v", c.in, first, last, err)
		}
	}
}
