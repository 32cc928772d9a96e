package render

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// The V8 heap flag bounds a page's JavaScript objects, not its renderer: DOM nodes, layout,
// images and array buffers live outside that heap, and RLIMIT_AS cannot be used (V8 reserves
// tens of GB of address space up front). So a watchdog reads the resident set of every process
// of the browser from /proc and kills one past the limit: a renderer killed that way crashes
// its page (the page's failure); the browser process itself past it takes the browser down (the
// worker's failure, and a new browser for the next page).

// watchdogEvery is how often the browser's processes are measured.
const watchdogEvery = 200 * time.Millisecond

type watchdog struct {
	root      int
	rootStart uint64 // root's start time: its pid reused by another process is not it
	dead      func() // called once when the browser process is gone
	limit     int64
	quit      chan struct{}
	once      sync.Once

	mu    sync.Mutex
	kills []kill // recent kills, for the pages that crashed to say why
}

type kill struct {
	at  time.Time
	msg string
}

// watch measures root's descendants (and root) every watchdogEvery until stop, and calls dead
// when root is gone (the browser's pipe does not always say so soon).
func watch(root int, limit int64, dead func()) *watchdog {
	w := &watchdog{root: root, rootStart: startOf(root), limit: limit, dead: dead, quit: make(chan struct{})}
	if root > 0 && limit > 0 {
		go w.run()
	}
	return w
}

func (w *watchdog) stop() { w.once.Do(func() { close(w.quit) }) }

func (w *watchdog) run() {
	t := time.NewTicker(watchdogEvery)
	defer t.Stop()
	for {
		select {
		case <-w.quit:
			return
		case <-t.C:
			w.check()
		}
	}
}

// check kills each process of the browser whose resident set is over the limit.
func (w *watchdog) check() {
	if w.rootStart == 0 || startOf(w.root) != w.rootStart {
		w.dead() // gone, a zombie, or its pid is another process's now
		w.stop()
		return
	}
	for _, p := range descendants(w.root) {
		rss := residentBytes(p.pid)
		if rss <= w.limit {
			continue
		}
		if killExact(p) == nil {
			w.mu.Lock()
			w.kills = append(w.kills, kill{time.Now(), fmt.Sprintf("browser process %d killed: %d MiB resident, over the %d MiB limit",
				p.pid, rss>>20, w.limit>>20)})
			if len(w.kills) > 16 {
				w.kills = w.kills[len(w.kills)-16:]
			}
			w.mu.Unlock()
		}
	}
}

// killExact kills p and no other process: through a pidfd opened before p's start time is
// checked again, so a pid freed and reused since p was measured is never signalled.
func killExact(p proc) error {
	fd, err := unix.PidfdOpen(p.pid, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if startOf(p.pid) != p.start {
		return fmt.Errorf("process %d is gone", p.pid)
	}
	return unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
}

// killedSince is what the watchdog killed since t ("" if nothing).
func (w *watchdog) killedSince(t time.Time) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := len(w.kills) - 1; i >= 0; i-- {
		if !w.kills[i].at.Before(t) {
			return w.kills[i].msg
		}
	}
	return ""
}

// proc is a process as /proc/pid/stat shows it; start (clock ticks after boot) tells it from
// a later process given the same pid.
type proc struct {
	pid, ppid int
	start     uint64
	zombie    bool
}

// descendants is root and every process below it, read from /proc.
func descendants(root int) []proc {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]proc{}
	var self proc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		p, ok := readProc(pid)
		if !ok || p.zombie {
			continue
		}
		if pid == root {
			self = p
		}
		children[p.ppid] = append(children[p.ppid], p)
	}
	if self.pid == 0 {
		return nil
	}
	out := []proc{self}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i].pid]...)
	}
	return out
}

// startOf is pid's start time (0: no such live process).
func startOf(pid int) uint64 {
	p, ok := readProc(pid)
	if !ok || p.zombie {
		return 0
	}
	return p.start
}

// readProc reads /proc/pid/stat: the fields after the command's closing parenthesis are the
// state (3), the parent (4) … and the start time (22).
func readProc(pid int) (proc, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return proc{}, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return proc{}, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 20 {
		return proc{}, false
	}
	ppid, _ := strconv.Atoi(string(f[1]))
	start, _ := strconv.ParseUint(string(f[19]), 10, 64)
	return proc{pid: pid, ppid: ppid, start: start, zombie: f[0][0] == 'Z'}, true
}

// residentBytes reads a process's resident set from /proc/pid/statm (in pages).
func residentBytes(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/statm")
	if err != nil {
		return 0
	}
	f := bytes.Fields(b)
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(string(f[1]), 10, 64)
	return pages * int64(os.Getpagesize())
}
