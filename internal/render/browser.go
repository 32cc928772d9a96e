package render

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"
	"github.com/trawlerdev/trawler/internal/confine"
)

// Browser is a headless Chromium that renders pages, started again when it dies.
type Browser struct {
	opts Options
	path string
	sem  chan struct{} // a tab each

	mu     sync.Mutex
	inst   *instance // nil: none running (the next page starts one)
	closed bool
}

// instance is one run of the browser process.
type instance struct {
	ctx    context.Context // the browser's chromedp context: tabs are made from it
	cancel context.CancelFunc
	dir    string // its profile, removed when it ends
	pid    int
	dog    *watchdog
}

// Start launches the browser: a broken install or a sandbox that cannot start fails here, at
// the worker's start, not on the first page.
func Start(opts Options) (*Browser, error) {
	path, err := Find(opts.ExecPath)
	if err != nil {
		return nil, err
	}
	if opts.Concurrency < 1 {
		opts.Concurrency = 1
	}
	if opts.PageTimeout <= 0 {
		opts.PageTimeout = 20 * time.Second
	}
	if opts.MaxDOMBytes <= 0 {
		opts.MaxDOMBytes = 5 << 20
	}
	if opts.MaxRequests <= 0 {
		opts.MaxRequests = 200
	}
	if opts.MemoryMB <= 0 {
		opts.MemoryMB = 512
	}
	b := &Browser{opts: opts, path: path, sem: make(chan struct{}, opts.Concurrency)}
	if _, err := b.current(); err != nil {
		return nil, err
	}
	return b, nil
}

// Concurrency is how many pages the browser renders at once.
func (b *Browser) Concurrency() int { return cap(b.sem) }

// Close stops the browser.
func (b *Browser) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	if b.inst != nil {
		b.inst.stop()
		b.inst = nil
	}
}

// Check says whether the browser answers (the health check's probe); a dead one is started
// again.
func (b *Browser) Check(ctx context.Context) error {
	inst, err := b.current()
	if err != nil {
		return err
	}
	pctx, cancel := context.WithTimeout(inst.ctx, 5*time.Second)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	if _, err := chromedp.CallBrowser(pctx, browser.GetVersion, cdp.Empty{}); err != nil {
		b.drop(inst)
		return fmt.Errorf("%w: no answer: %v", ErrBrowserGone, err)
	}
	return nil
}

// current is the running browser, started if there is none (or it died).
func (b *Browser) current() (*instance, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, fmt.Errorf("%w: closed", ErrBrowserGone)
	}
	if b.inst != nil && b.inst.ctx.Err() == nil {
		return b.inst, nil
	}
	if b.inst != nil {
		b.inst.stop()
		b.inst = nil
	}
	inst, err := launch(b.path, b.opts)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBrowserGone, err)
	}
	b.inst = inst
	return inst, nil
}

// drop stops inst if it is still the current browser: the next page starts another.
func (b *Browser) drop(inst *instance) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.inst == inst {
		b.inst = nil
	}
	inst.stop()
}

func (in *instance) stop() {
	in.cancel()
	in.dog.stop()
	_ = os.RemoveAll(in.dir)
}

// launch starts one browser process, sandboxed, with an empty environment, in a network
// namespace of its own (nothing but a loopback that is down: the DevTools pipe is its only
// way out), and with the flags that keep it off the network besides. Where no network
// namespace can be made, it starts without one, and says so in the log: the flags, the dead
// proxy and the resolver still hold.
func launch(path string, opts Options) (*instance, error) {
	inst, err := launchIn(path, opts, true)
	if err == nil {
		return inst, nil
	}
	if opts.RequireIsolation {
		return nil, fmt.Errorf("render: no network namespace for the browser and isolation is required (TRAWLER_REQUIRE_ISOLATION): %w", err)
	}
	slog.Warn("render: no network namespace for the browser; it runs on the worker's network, held off it by its flags",
		"error", err)
	return launchIn(path, opts, false)
}

func launchIn(path string, opts Options, offline bool) (*instance, error) {
	dir, err := os.MkdirTemp("", "trawler-render-")
	if err != nil {
		return nil, fmt.Errorf("render: profile directory: %w", err)
	}
	cred, err := browserUser(opts.User)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			_ = os.RemoveAll(dir)
			return nil, fmt.Errorf("render: profile directory for uid %d: %w", cred.Uid, err)
		}
	}
	flags := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(dir),
		// The sandbox stays on (chromedp turns it off for root unless told not to): the
		// browser runs as an unprivileged user instead.
		chromedp.Flag("no-sandbox", false),
		// Only what the browser needs: the worker's credentials stay in the worker.
		chromedp.NoInheritEnv, chromedp.Env("HOME="+dir, "PATH=/usr/bin:/bin", "LANG=C.UTF-8"),
		chromedp.ModifyCmdFunc(func(cmd *exec.Cmd) { cmd.SysProcAttr = isolation(cred, offline) }),
		// No GPU and no software GL (chromedp.DisableGPU would add --enable-unsafe-swiftshader):
		// no WebGL, no 3D APIs for a page to reach the GL stack through.
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-software-rasterizer", true),
		chromedp.Flag("disable-3d-apis", true),
		chromedp.Flag("disable-webgl", true),
		// WebRTC: UDP only through a proxy, and the only proxy is dead, so no STUN/TURN packet
		// leaves (the forced policy alone did not stop it).
		chromedp.Flag("webrtc-ip-handling-policy", "disable_non_proxied_udp"),
		chromedp.Flag("force-webrtc-ip-handling-policy", "disable_non_proxied_udp"), // a value: some builds read the policy from it
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-crash-reporter", true),
		chromedp.Flag("disable-breakpad", true),
		chromedp.Flag("mute-audio", true),
		chromedp.Flag("blink-settings", "imagesEnabled=false"),
		// The backstop: whatever the policy does not see goes to a dead proxy and resolves
		// to nothing.
		chromedp.ProxyServer("http://127.0.0.1:9"),
		chromedp.Flag("proxy-bypass-list", "<-loopback>"),
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND"),
		chromedp.Flag("js-flags", fmt.Sprintf("--max-old-space-size=%d", opts.MemoryMB)),
	}
	actx, acancel := chromedp.NewExecAllocator(context.Background(), flags...)
	bctx, bcancel := chromedp.NewContext(actx)
	cancel := func() { bcancel(); acancel() }
	if err := chromedp.Do(bctx); err != nil { // start it now
		cancel()
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("render: start %s (sandboxed, as uid %s): %w", path, uidOf(cred), err)
	}
	inst := &instance{ctx: bctx, cancel: cancel, dir: dir}
	if p := chromedp.FromContext(bctx).Browser.Process(); p != nil {
		inst.pid = p.Pid
	}
	inst.dog = watch(inst.pid, int64(opts.MemoryMB)<<20, cancel) // a dead browser ends its pages now
	return inst, nil
}

// isolation is how the browser process is started: killed with the worker; as cred's user;
// with offline, in a new network namespace (as root directly; otherwise inside a new user
// namespace that maps the worker's own uid and gid, so nothing gains a privilege).
func isolation(cred *syscall.Credential, offline bool) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Credential: cred}
	if offline {
		confine.Offline(a)
	}
	return a
}

// browserUser is the credential the browser runs with: nil (the worker's own user) unless the
// worker is root, where Chromium's sandbox will not start; then name's (default nobody).
func browserUser(name string) (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	if name == "" {
		name = "nobody"
	}
	u, err := user.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("render: the browser's user %q: %w", name, err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil || uid == 0 {
		return nil, fmt.Errorf("render: the browser's user %q (uid %s) is not an unprivileged user", name, u.Uid)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}, nil
}

func uidOf(c *syscall.Credential) string {
	if c == nil {
		return strconv.Itoa(os.Geteuid())
	}
	return strconv.Itoa(int(c.Uid))
}
