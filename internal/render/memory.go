package render

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"
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
	root  int
	dead  func() // called once when the browser process is gone
	limit int64
	quit  chan struct{}
	once  sync.Once

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
	w := &watchdog{root: root, limit: limit, dead: dead, quit: make(chan struct{})}
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
	if !running(w.root) {
		w.dead()
		w.stop()
		return
	}
	for _, pid := range descendants(w.root) {
		rss := residentBytes(pid)
		if rss <= w.limit {
			continue
		}
		if syscall.Kill(pid, syscall.SIGKILL) == nil {
			w.mu.Lock()
			w.kills = append(w.kills, kill{time.Now(), fmt.Sprintf("browser process %d killed: %d MiB resident, over the %d MiB limit",
				pid, rss>>20, w.limit>>20)})
			if len(w.kills) > 16 {
				w.kills = w.kills[len(w.kills)-16:]
			}
			w.mu.Unlock()
		}
	}
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

// descendants is root and every process below it, read from /proc.
func descendants(root int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid := parentOf(pid); ppid > 0 {
			children[ppid] = append(children[ppid], pid)
		}
	}
	out := []int{root}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out
}

// running says whether pid is a live process (not gone, not a zombie).
func running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i > 0 && len(b) > i+2 && b[i+2] != 'Z'
}

// parentOf reads the parent pid from /proc/pid/stat (the field after the command's closing
// parenthesis and the state).
func parentOf(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(string(f[1]))
	return ppid
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
