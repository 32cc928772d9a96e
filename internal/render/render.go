// Package render owns headless rendering: one Chromium process driven over CDP (chromedp), a
// fresh browser context per page, at most Options.Concurrency pages at once, within a time,
// request, byte, memory and DOM-size budget per page.
//
// The browser is treated as what runs hostile code:
//   - its sandbox is on: where the worker is root, the browser runs as an unprivileged user
//     (Options.User, default nobody) so Chromium's namespace sandbox can start;
//   - it inherits none of the worker's environment (database URL, S3 secret): it gets HOME,
//     PATH and LANG only;
//   - it has no network of its own: every request a page makes is paused and handed to the
//     caller's Policy, which answers it (from a capture, or by a fetch the caller paces) or
//     blocks it; a dead proxy and a resolver that resolves nothing catch what the policy never
//     sees; WebRTC may use proxied UDP only (so none), WebGL and 3D are off;
//   - each page gets a fresh browser context (no cookies, storage, caches or service workers
//     from another page), downloads are denied and dialogs dismissed;
//   - each browser process is held to Options.MemoryMB of resident memory by a watchdog (the
//     V8 heap flag alone does not bound a renderer), and the DOM is cut inside the page, in an
//     isolated world the page's scripts cannot reach, before it crosses the pipe.
//
// A page that crashes or exhausts its renderer fails alone (ErrPageCrashed); a browser that
// dies is the worker's failure (ErrBrowserGone): the next page starts a new one.
package render

import (
	"context"
	"errors"
	"os/exec"
	"time"
)

// Options bound the browser and each page.
type Options struct {
	ExecPath    string        // the Chromium binary ("": chromium, chromium-browser or google-chrome on PATH)
	User        string        // the unprivileged user the browser runs as when the worker is root ("": nobody)
	Concurrency int           // pages rendered at once
	PageTimeout time.Duration // per page, from navigation to the DOM read
	Settle      time.Duration // after the load event, for scripts that run late (timers, fetches)
	MaxBytes    int64         // bytes of subresources a page may load
	MaxRequests int           // requests a page may make besides its own document; more are blocked
	MaxDOMBytes int           // the serialized DOM kept (longer: cut inside the page)
	MemoryMB    int           // V8 heap per renderer, and resident memory per browser process
	// RequireIsolation refuses to start a browser without a network namespace of its own.
	RequireIsolation bool
}

// Request is one request a page makes.
type Request struct {
	URL          string
	Method       string
	ResourceType string // Document, Script, Stylesheet, Image, XHR, Fetch…
}

// Answer is what a Policy makes of a request: a response to give the page, or a reason to
// block it.
type Answer struct {
	Block       string // non-empty: the request fails, for this reason
	Status      int
	ContentType string
	Body        []byte
	// Release, if set, is called once the page has Body (or was refused it): the body's
	// bytes go back to the worker's budget.
	Release func()
}

// Policy answers the requests of one page. It is called from a few goroutines at once (at
// most policyWorkers); the context ends when the page does.
type Policy func(ctx context.Context, r Request) Answer

// Result is a rendered page.
type Result struct {
	DOM         string         // document.documentElement.outerHTML after the scripts ran, as the browser serializes it
	Truncated   bool           // the DOM was longer than MaxDOMBytes
	Requests    int            // requests the page made (its own document included)
	Answered    int            // of them answered by the policy
	Blocked     map[string]int // blocked requests by reason
	Bytes       int64          // bytes of subresources given to the page
	Dialogs     int            // alert, confirm, prompt and beforeunload dialogs dismissed
	Navigations []string       // where the page tried to take its main frame (blocked: the DOM stays the page's)
	Errors      []string       // what went wrong on the way, the DOM still read
	Look        *Seen          // what the page showed (Browser.Look only)
}

// ErrTimeLimit begins the error a Result holds when the page ran out of its time.
const ErrTimeLimit = "page time limit"

var (
	// ErrNoBrowser says no Chromium binary was found.
	ErrNoBrowser = errors.New("render: no chromium binary (Debian: apt-get install chromium)")
	// ErrBrowserGone says the browser died or could not be started: the worker's failure, not
	// the page's. The next Render starts a new browser.
	ErrBrowserGone = errors.New("render: the browser is gone")
	// ErrPageCrashed says the page's renderer crashed or was killed over its memory limit:
	// the page's own failure.
	ErrPageCrashed = errors.New("render: the page's renderer crashed")
)

// Find is the Chromium binary to use: path if given, else the first browser on PATH.
func Find(path string) (string, error) {
	if path != "" {
		return exec.LookPath(path)
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", ErrNoBrowser
}
