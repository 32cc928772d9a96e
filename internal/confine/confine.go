// Package confine runs the child processes that read untrusted bytes (poppler on a crawled
// PDF) under kernel resource limits that hold whatever the platform's shell is, with an empty
// environment, in a network namespace of their own where one can be made (offline.go).
//
// Why a re-exec and not `sh -c "ulimit …; exec …"`: Debian's /bin/sh is dash, whose ulimit
// takes one limit per call, so the one-line form failed there, the error was hidden and
// poppler ran with no limit at all. Go cannot set a child's rlimits between fork and exec, so
// the worker's own binary is the small launcher: Command starts /proc/self/exe with a marker
// argument, this package's init sees the marker before main runs (only the package inits
// ordered before it run first, and they start nothing), calls setrlimit(2) and execs the
// tool. The limits are set by a system call, not parsed by a
// shell, and a child can read them back in /proc/self/limits (the tests do).
package confine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// marker is the first argument of a re-exec that must confine itself and exec a tool.
const marker = "__trawler_confine__"

// Limits bound one child process. A zero field is not set (the worker's own limit holds):
// callers fill every field they mean to bound.
type Limits struct {
	MemoryBytes uint64 // address space (RLIMIT_AS)
	CPUSeconds  uint64 // CPU time (RLIMIT_CPU): the kernel kills the child past it
	FileBytes   uint64 // largest file the child may write (RLIMIT_FSIZE); pipes are not files
	OpenFiles   uint64 // file descriptors (RLIMIT_NOFILE)
	// RequireOffline refuses to start the child where it cannot have a network namespace
	// (NetworkIsolation); otherwise it runs on the worker's network there.
	RequireOffline bool
}

// Command is exec.CommandContext for path under lim: a re-exec of this binary that sets the
// limits and then becomes path, with an empty environment (the worker's credentials never
// reach it), its own process group (killed whole when ctx ends), and killed if the worker
// dies first.
func Command(ctx context.Context, lim Limits, path string, args ...string) (*exec.Cmd, error) {
	abs, err := exec.LookPath(path)
	if err != nil {
		return nil, fmt.Errorf("confine: %s: %w", path, err)
	}
	argv := append([]string{marker, fmtLimit(lim.MemoryBytes), fmtLimit(lim.CPUSeconds), fmtLimit(lim.FileBytes),
		fmtLimit(lim.OpenFiles), abs}, args...)
	cmd := exec.CommandContext(ctx, "/proc/self/exe", argv...)
	cmd.Env = []string{} // not nil: nil would inherit the worker's
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := NetworkIsolation(); err == nil {
		Offline(cmd.SysProcAttr)
	} else if lim.RequireOffline {
		return nil, fmt.Errorf("confine: %s not started: isolation is required (TRAWLER_REQUIRE_ISOLATION) and %w", path, err)
	}
	cmd.Cancel = func() error {
		// The whole group: a tool that forks leaves nothing behind.
		if cmd.Process != nil {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
		return os.ErrProcessDone
	}
	return cmd, nil
}

func fmtLimit(n uint64) string { return strconv.FormatUint(n, 10) }

func init() {
	if len(os.Args) > 1 && os.Args[1] == probeMarker {
		os.Exit(0)
	}
	if len(os.Args) > 1 && os.Args[1] == marker {
		err := enter(os.Args[2:])
		// Only a failure returns: the launcher says why and ends as the tool would have.
		fmt.Fprintf(os.Stderr, "confine: %v\n", err)
		os.Exit(126)
	}
}

// enter sets the limits named by args (memory, cpu, file size, open files, then the tool and
// its arguments) on this process and execs the tool, which keeps them.
func enter(args []string) error {
	if len(args) < 5 {
		return errors.New("launcher called without limits and a tool")
	}
	resources := []int{syscall.RLIMIT_AS, syscall.RLIMIT_CPU, syscall.RLIMIT_FSIZE, syscall.RLIMIT_NOFILE}
	for i, res := range resources {
		n, err := strconv.ParseUint(args[i], 10, 64)
		if err != nil {
			return fmt.Errorf("limit %q: %w", args[i], err)
		}
		if n == 0 {
			continue
		}
		lim := syscall.Rlimit{Cur: n, Max: n}
		if res == syscall.RLIMIT_CPU {
			// SIGXCPU at the soft limit, so the reason can say "CPU"; SIGKILL a second later.
			lim.Max = n + 1
		}
		if err := syscall.Setrlimit(res, &lim); err != nil {
			return fmt.Errorf("setrlimit %d to %d: %w", res, n, err)
		}
	}
	// No core files: a crashing parser leaves nothing on the worker's disk.
	if err := syscall.Setrlimit(syscall.RLIMIT_CORE, &syscall.Rlimit{}); err != nil {
		return fmt.Errorf("setrlimit core: %w", err)
	}
	tool := args[4]
	return syscall.Exec(tool, append([]string{tool}, args[5:]...), os.Environ())
}

// HideWorker makes the calling process undumpable: its /proc entries (environ, mem, maps)
// become root's, and no process of the same uid may ptrace it. A child that shares the worker's
// uid (Chromium where the worker is not root, poppler always) and is taken over by a hostile
// page or PDF then cannot read the worker's environment — its database URL and S3 keys — nor
// its memory. Children get their own dumpable flag at exec: this does not reach them.
func HideWorker() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("confine: prctl(PR_SET_DUMPABLE, 0): %w", err)
	}
	return nil
}
