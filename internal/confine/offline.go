package confine

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
)

// A child that reads untrusted bytes (poppler on a PDF, Chromium on a page) runs in a network
// namespace of its own, whose only interface is a loopback that is down: what takes it over
// reaches nothing, the worker's databases and the cloud's metadata address included.

// probeMarker is the first argument of a re-exec that only proves it could start.
const probeMarker = "__trawler_confine_probe__"

// Offline puts a child started with a into a new network namespace: as root directly;
// otherwise inside a new user namespace that maps the caller's own uid and gid, so nothing
// gains a privilege.
func Offline(a *syscall.SysProcAttr) {
	a.Cloneflags |= syscall.CLONE_NEWNET
	if os.Geteuid() != 0 {
		uid, gid := os.Geteuid(), os.Getegid()
		a.Cloneflags |= syscall.CLONE_NEWUSER
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		a.GidMappingsEnableSetgroups = false
	}
}

var probe struct {
	once sync.Once
	err  error
}

// NetworkIsolation says whether this process can start children offline (probed once, by
// starting one), and why not. A container without user namespaces, or a seccomp profile
// that denies them, cannot.
func NetworkIsolation() error {
	probe.once.Do(func() {
		cmd := exec.Command("/proc/self/exe", probeMarker)
		cmd.Env = []string{}
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		Offline(cmd.SysProcAttr)
		if out, err := cmd.CombinedOutput(); err != nil {
			probe.err = fmt.Errorf("confine: no network namespace for child processes: %w %s", err, out)
		}
	})
	return probe.err
}

// Isolation names the isolation this process gives its readers, for `trawler check`.
func Isolation() string {
	if err := NetworkIsolation(); err != nil {
		return "resource limits, empty environment; no network namespace (" + err.Error() + ")"
	}
	return "resource limits, empty environment, network namespace"
}
