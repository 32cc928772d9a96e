package confine

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
)

// A reader runs in a network namespace of its own (not the worker's), and with RequireOffline
// a process that cannot have one refuses to start it.
func TestReadersRunOffline(t *testing.T) {
	if err := NetworkIsolation(); err != nil {
		t.Fatalf("this machine can make network namespaces (the render tests use them): %v", err)
	}
	own, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	cmd, err := Command(context.Background(), Limits{RequireOffline: true}, "readlink", "/proc/self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(out)); got == "" || got == own {
		t.Errorf("the reader's network namespace is %q, the worker's %q: want one of its own", got, own)
	}
	if !strings.Contains(Isolation(), "network namespace") || strings.Contains(Isolation(), "no network namespace") {
		t.Errorf("Isolation() = %q", Isolation())
	}
	probe.err = errors.New("no user namespaces here") // as a locked-down container would say
	defer func() { probe.err = nil }()
	if _, err := Command(context.Background(), Limits{RequireOffline: true}, "readlink", "/proc/self/ns/net"); err == nil {
		t.Error("a reader was started without isolation when it is required")
	}
	if _, err := Command(context.Background(), Limits{}, "readlink", "/proc/self/ns/net"); err != nil {
		t.Errorf("without the requirement, a reader starts on the worker's network: %v", err)
	}
}
