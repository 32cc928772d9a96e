// Package render owns headless rendering: one Chromium process driven over CDP (chromedp), a
// tab per page, at most Options.Concurrency at once, within a time, byte and DOM-size budget
// per page. The browser reaches nothing by itself: every request a page makes is paused and
// handed to the caller's Policy, which answers it (from a capture already fetched, or by a
// fetch the caller paces) or blocks it. A dead proxy and a resolver that resolves nothing are
// the backstop: a request the policy never sees (a WebSocket, a prefetch) goes nowhere.
package render

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// Options bound the browser and each page.
type Options struct {
	ExecPath    string        // the Chromium binary ("": chromium, chromium-browser or google-chrome on PATH)
	Concurrency int           // pages rendered at once
	PageTimeout time.Duration // per page, from navigation to the DOM read
	Settle      time.Duration // after the load event, for scripts that run late (timers, fetches)
	MaxBytes    int64         // bytes of subresources a page may load
	MaxDOMBytes int           // the serialized DOM kept (longer: cut)
	MemoryMB    int           // V8 heap per renderer process
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
}

// Policy answers the requests of one page. It is called from several goroutines at once.
type Policy func(ctx context.Context, r Request) Answer

// Result is a rendered page.
type Result struct {
	DOM       string         // document.documentElement.outerHTML after the scripts ran
	Truncated bool           // the DOM was longer than MaxDOMBytes
	Requests  int            // requests the page made (its own document included)
	Answered  int            // of them answered by the policy
	Blocked   map[string]int // blocked requests by reason
	Bytes     int64          // bytes of subresources given to the page
	Errors    []string       // what went wrong on the way, the DOM still read
}

// page is a render in progress: its counts, kept as requests are answered.
type page struct {
	requests, answered, bytes atomic.Int64
	budget                    int64
	mu                        sync.Mutex
	blocked                   map[string]int
	errs                      []string
}

// ErrNoBrowser says no Chromium binary was found.
var ErrNoBrowser = errors.New("render: no chromium binary (Debian: apt-get install chromium)")

// Browser is a running headless Chromium.
type Browser struct {
	opts   Options
	ctx    context.Context // the browser's chromedp context: tabs are made from it
	cancel context.CancelFunc
	sem    chan struct{}
}

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

// Start launches the browser.
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
	flags := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path), chromedp.Headless, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.NoSandbox, // workers run as root in containers; pages run with no network of their own
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("mute-audio", true),
		chromedp.Flag("blink-settings", "imagesEnabled=false"),
		// The backstop: whatever the policy does not see goes to a dead proxy and resolves
		// to nothing.
		chromedp.ProxyServer("http://127.0.0.1:9"),
		chromedp.Flag("proxy-bypass-list", "<-loopback>"),
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND"),
	}
	if opts.MemoryMB > 0 {
		flags = append(flags, chromedp.Flag("js-flags", fmt.Sprintf("--max-old-space-size=%d", opts.MemoryMB)))
	}
	actx, acancel := chromedp.NewExecAllocator(context.Background(), flags...)
	bctx, bcancel := chromedp.NewContext(actx)
	if err := chromedp.Do(bctx); err != nil { // start it now: a broken install fails the worker's start
		bcancel()
		acancel()
		return nil, fmt.Errorf("render: start %s: %w", path, err)
	}
	return &Browser{opts: opts, ctx: bctx, cancel: func() { bcancel(); acancel() }, sem: make(chan struct{}, opts.Concurrency)}, nil
}

// Concurrency is how many pages the browser renders at once.
func (b *Browser) Concurrency() int { return cap(b.sem) }

// Close stops the browser.
func (b *Browser) Close() { b.cancel() }

// Render opens pageURL in a new tab, lets its scripts run, and returns the DOM. Every request
// goes to policy; the page's own document is requested like any other (the policy serves it
// from the capture).
func (b *Browser) Render(ctx context.Context, pageURL string, policy Policy) (*Result, error) {
	select {
	case b.sem <- struct{}{}:
		defer func() { <-b.sem }()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	pg := &page{blocked: map[string]int{}, budget: b.opts.MaxBytes}
	tab, closeTab := chromedp.NewContext(b.ctx)
	defer closeTab()
	// The tab's first action opens it; then the page's time starts.
	if err := chromedp.Do(tab); err != nil {
		return nil, fmt.Errorf("render: open a tab: %w", err)
	}
	tctx, cancel := context.WithTimeout(tab, b.opts.PageTimeout)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel) // the activity's end ends the page too
	defer stop()
	paused := chromedp.Events(tctx, fetch.RequestPaused)
	if _, err := chromedp.Call(tctx, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*"}}}); err != nil {
		return nil, fmt.Errorf("render: intercept requests: %w", err)
	}
	var wg sync.WaitGroup
	go func() {
		for ev, err := range paused {
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				pg.answer(tctx, ev, policy)
			}()
		}
	}()
	err := chromedp.Do(tctx, chromedp.Navigate(pageURL))
	if err != nil && tctx.Err() == nil {
		pg.fail("navigate: " + err.Error())
	}
	if b.opts.Settle > 0 && tctx.Err() == nil {
		t := time.NewTimer(b.opts.Settle)
		select {
		case <-t.C:
		case <-tctx.Done():
			t.Stop()
		}
	}
	// The DOM as it stands, even when the page ran out of time: what loaded is kept. A fresh
	// short deadline for the read, since the page's may be spent.
	rctx, rcancel := context.WithTimeout(tab, 5*time.Second)
	defer rcancel()
	dom, derr := chromedp.Run(rctx, chromedp.Evaluate[string]("document.documentElement ? document.documentElement.outerHTML : ''"))
	timedOut := tctx.Err() != nil
	cancel()
	wg.Wait()
	if derr != nil {
		return nil, fmt.Errorf("render: read the DOM of %s: %w", pageURL, errors.Join(derr, err))
	}
	if timedOut && ctx.Err() == nil {
		pg.fail(fmt.Sprintf("page time limit (%s) reached", b.opts.PageTimeout))
	}
	res := &Result{Requests: int(pg.requests.Load()), Answered: int(pg.answered.Load()), Bytes: pg.bytes.Load()}
	if len(dom) > b.opts.MaxDOMBytes {
		dom, res.Truncated = dom[:b.opts.MaxDOMBytes], true
	}
	res.DOM = strings.ToValidUTF8(dom, "\uFFFD")
	pg.mu.Lock()
	res.Blocked, res.Errors = pg.blocked, pg.errs
	pg.mu.Unlock()
	return res, nil
}

// answer decides one paused request with the policy, within the page's byte budget.
func (r *page) answer(ctx context.Context, ev fetch.EventRequestPaused, policy Policy) {
	r.requests.Add(1)
	req := Request{ResourceType: string(ev.ResourceType)}
	if ev.Request != nil {
		req.URL, req.Method = ev.Request.URL, ev.Request.Method
	}
	var a Answer
	switch {
	case req.Method != "" && req.Method != "GET":
		a.Block = "method " + req.Method // a crawler only reads
	case r.budget > 0 && r.bytes.Load() >= r.budget:
		a.Block = "byte budget"
	default:
		a = policy(ctx, req)
	}
	if a.Block == "" && r.budget > 0 && r.bytes.Add(int64(len(a.Body))) > r.budget && ev.ResourceType != network.ResourceTypeDocument {
		a = Answer{Block: "byte budget"}
	}
	if a.Block != "" {
		r.mu.Lock()
		r.blocked[a.Block]++
		r.mu.Unlock()
		if _, err := chromedp.Call(ctx, fetch.FailRequest, fetch.FailRequestParams{RequestID: ev.RequestID,
			ErrorReason: network.ErrorReasonBlockedByClient}); err != nil && ctx.Err() == nil {
			r.fail("block " + req.URL + ": " + err.Error())
		}
		return
	}
	r.answered.Add(1)
	status := a.Status
	if status == 0 {
		status = 200
	}
	var headers []*fetch.HeaderEntry
	if a.ContentType != "" {
		headers = append(headers, &fetch.HeaderEntry{Name: "Content-Type", Value: a.ContentType})
	}
	if _, err := chromedp.Call(ctx, fetch.FulfillRequest, fetch.FulfillRequestParams{RequestID: ev.RequestID,
		ResponseCode: int64(status), ResponseHeaders: headers, Body: a.Body}); err != nil && ctx.Err() == nil {
		r.fail("answer " + req.URL + ": " + err.Error())
	}
}

func (r *page) fail(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.errs) < 20 {
		r.errs = append(r.errs, msg)
	}
}
