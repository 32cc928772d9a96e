package confine_test

import (
	"context"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/trawlerdev/trawler/internal/confine"
)

// The child reads its own limits back from the kernel: they are the ones asked for, whatever
// /bin/sh is, and the worker's environment does not reach it.
func TestChildHasItsLimitsAndNoEnvironment(t *testing.T) {
	t.Setenv("DATABASE_URL", "postgres://secret@db/trawler")
	cmd, err := confine.Command(context.Background(), confine.Limits{MemoryBytes: 300 << 20, CPUSeconds: 7, FileBytes: 1, OpenFiles: 40},
		"cat", "/proc/self/limits", "/proc/self/environ")
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	want := map[string]string{"Max address space": "314572800", "Max cpu time": "7", "Max file size": "1", "Max open files": "40",
		"Max core file size": "0"}
	for _, line := range strings.Split(string(out), "\n") {
		for name, v := range want {
			if strings.HasPrefix(line, name+" ") {
				f := strings.Fields(strings.TrimPrefix(line, name))
				hard := v
				if name == "Max cpu time" {
					hard = "8" // a second past the soft limit: SIGXCPU first, then SIGKILL
				}
				if len(f) < 2 || f[0] != v || f[1] != hard {
					t.Errorf("%s: %q, want soft %s and hard %s", name, line, v, hard)
				}
				delete(want, name)
			}
		}
	}
	if len(want) > 0 {
		t.Errorf("limits not found: %v in %s", want, out)
	}
	if strings.Contains(string(out), "DATABASE_URL") || strings.Contains(string(out), "secret") {
		t.Errorf("the child saw the worker's environment: %s", out)
	}
}

// A child over its memory limit fails; the caller lives and says why.
func TestChildOverItsMemoryFails(t *testing.T) {
	// sort holds its whole input in memory (here 64 MiB of one line) under a 32 MiB limit.
	cmd, err := confine.Command(context.Background(), confine.Limits{MemoryBytes: 32 << 20}, "sort")
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdin = strings.NewReader(strings.Repeat("x", 64<<20))
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("sort of 64 MiB under a 32 MiB limit succeeded: %.200s", out)
	}
	t.Logf("%v: %.200s", err, out)
}

// The worker hides itself from its children: undumpable, so a child of the same uid cannot
// read its environment or memory through /proc or ptrace.
func TestHideWorker(t *testing.T) {
	if err := confine.HideWorker(); err != nil {
		t.Fatal(err)
	}
	v, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
	if err != nil || v != 0 {
		t.Errorf("dumpable %d (%v), want 0", v, err)
	}
	// Hidden, the worker still re-executes itself to confine a child.
	cmd, err := confine.Command(context.Background(), confine.Limits{MemoryBytes: 256 << 20}, "cat", "/proc/self/limits")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "268435456") {
		t.Errorf("a confined child of a hidden worker: %v %s", err, out)
	}
}
