package render

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/inspector"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// policyWorkers is how many of a page's requests are decided at once: a fixed few goroutines
// per page, whatever the page asks for (a request past the page's cap never reaches them).
const policyWorkers = 4

// pageState is a render in progress: its counts, kept as requests are answered.
type pageState struct {
	url                       string // the page, without its fragment
	mainFrame                 cdp.FrameID
	maxRequests               int64
	requests, answered, bytes atomic.Int64
	dialogs                   atomic.Int64
	crashed                   atomic.Bool
	budget                    int64
	mu                        sync.Mutex
	blocked                   map[string]int
	navigations               []string
	errs                      []string
}

// Render opens pageURL in a new tab of a fresh browser context, lets its scripts run, and
// returns the DOM. Every request goes to policy; the page's own document is requested like
// any other (the policy serves it from the capture). ErrPageCrashed: the page's failure;
// ErrBrowserGone: the browser's (the next call starts another).
func (b *Browser) Render(ctx context.Context, pageURL string, policy Policy) (*Result, error) {
	return b.render(ctx, pageURL, policy, false)
}

// Look renders pageURL as Render does, in a viewport of Viewport's size, and also returns what
// it shows: a screenshot of the viewport and the page's visible text (Result.Look).
func (b *Browser) Look(ctx context.Context, pageURL string, policy Policy) (*Result, error) {
	return b.render(ctx, pageURL, policy, true)
}

func (b *Browser) render(ctx context.Context, pageURL string, policy Policy, look bool) (*Result, error) {
	select {
	case b.sem <- struct{}{}:
		defer func() { <-b.sem }()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	inst, err := b.current()
	if err != nil {
		return nil, err
	}
	started := time.Now()
	res, err := b.renderIn(ctx, inst, pageURL, policy, look)
	if err != nil && !inst.alive() {
		b.drop(inst)
		return nil, fmt.Errorf("%w while rendering %s: %v", ErrBrowserGone, pageURL, err)
	}
	if errors.Is(err, ErrPageCrashed) {
		if why := inst.dog.killedSince(started); why != "" {
			err = fmt.Errorf("%w: %s", err, why)
		}
	}
	return res, err
}

// alive says whether the browser process still runs.
func (in *instance) alive() bool {
	return in.ctx.Err() == nil && in.pid > 0 && startOf(in.pid) == in.dog.rootStart
}

func (b *Browser) renderIn(ctx context.Context, inst *instance, pageURL string, policy Policy, look bool) (*Result, error) {
	pg := &pageState{url: withoutFragment(pageURL), blocked: map[string]int{}, budget: b.opts.MaxBytes,
		maxRequests: int64(b.opts.MaxRequests)}
	// A browser context of its own: no cookie, storage, cache or service worker of another
	// page or crawl, all gone when the tab closes.
	tab, closeTab := chromedp.NewContext(inst.ctx, chromedp.WithNewBrowserContext())
	defer closeTab()
	if err := chromedp.Do(tab); err != nil { // the first action opens it; then the page's time starts
		return nil, fmt.Errorf("render: open a tab: %w", err)
	}
	c := chromedp.FromContext(tab)
	pg.mainFrame = cdp.FrameID(c.Target.TargetID)
	if _, err := chromedp.CallBrowser(tab, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
		Behavior: browser.SetDownloadBehaviorBehaviorDeny, BrowserContextID: c.BrowserContextID}); err != nil {
		return nil, fmt.Errorf("render: deny downloads: %w", err)
	}
	tctx, cancel := context.WithTimeout(tab, b.opts.PageTimeout)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel) // the activity's end ends the page too
	defer stop()

	// Subscribed here, before any goroutine runs and before navigation: an event that came
	// before a late goroutine subscribed (the page's own document, a crash) would be lost.
	paused := chromedp.Events(tctx, fetch.RequestPaused)
	dialogs := chromedp.Events(tctx, page.JavascriptDialogOpening)
	crashes := chromedp.Events(tctx, inspector.TargetCrashed)
	// Every goroutine of the page is counted before any starts: none is added while Wait runs.
	var wg sync.WaitGroup
	queue := make(chan *fetch.EventRequestPaused, pg.maxRequests+1)
	wg.Add(policyWorkers + 3)
	for range policyWorkers {
		go func() {
			defer wg.Done()
			for ev := range queue {
				pg.answer(tctx, ev, policy)
			}
		}()
	}
	go func() { // one dispatcher: caps and navigations are decided here, in order
		defer wg.Done()
		defer close(queue)
		for ev, err := range paused {
			if err != nil {
				return
			}
			if !pg.dispatch(tctx, &ev, queue) {
				cancel() // a flood past any use: the page ends, and its queue with it
				return
			}
		}
	}()
	go func() { // dialogs are dismissed, or the page's scripts would wait on them forever
		defer wg.Done()
		for _, err := range dialogs {
			if err != nil {
				return
			}
			pg.dialogs.Add(1)
			if _, err := chromedp.Call(tctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false}); err != nil && tctx.Err() == nil {
				pg.fail("dismiss a dialog: " + err.Error())
			}
		}
	}()
	go func() { // a renderer that dies (its own crash, or the memory watchdog) ends the page
		defer wg.Done()
		for _, err := range crashes {
			if err != nil {
				return
			}
			pg.crashed.Store(true)
			cancel()
			return
		}
	}()
	defer func() {
		cancel()
		wg.Wait()
	}()

	if _, err := chromedp.Call(tctx, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*"}}}); err != nil {
		return nil, fmt.Errorf("render: intercept requests: %w", err)
	}
	if look {
		if _, err := chromedp.Call(tctx, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
			Width: ViewportWidth, Height: ViewportHeight, DeviceScaleFactor: 1}); err != nil {
			return nil, fmt.Errorf("render: set the viewport: %w", err)
		}
	}
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
	if pg.crashed.Load() {
		return nil, fmt.Errorf("%w: %s", ErrPageCrashed, pageURL)
	}
	// The DOM as it stands, even when the page ran out of time: what loaded is kept. A fresh
	// short deadline for the read, since the page's may be spent.
	rctx, rcancel := context.WithTimeout(tab, 5*time.Second)
	defer rcancel()
	dom, cut, derr := readDOM(rctx, b.opts.MaxDOMBytes)
	var seen *Seen
	if look && derr == nil {
		seen, derr = readLook(rctx)
	}
	timedOut := tctx.Err() != nil
	cancel()
	if pg.crashed.Load() {
		return nil, fmt.Errorf("%w: %s", ErrPageCrashed, pageURL)
	}
	if derr != nil {
		return nil, fmt.Errorf("render: read the DOM of %s: %w", pageURL, errors.Join(derr, err))
	}
	if timedOut && ctx.Err() == nil {
		pg.fail(fmt.Sprintf("%s (%s) reached", ErrTimeLimit, b.opts.PageTimeout))
	}
	res := &Result{Requests: int(pg.requests.Load()), Answered: int(pg.answered.Load()), Bytes: pg.bytes.Load(),
		Dialogs: int(pg.dialogs.Load()), DOM: dom, Truncated: cut, Look: seen}
	pg.mu.Lock()
	res.Blocked, res.Errors, res.Navigations = pg.blocked, pg.errs, pg.navigations
	pg.mu.Unlock()
	return res, nil
}

// floodFactor: a page that makes this many times its cap of requests is ended, so the queue
// of events the browser sends faster than they are refused cannot grow without bound.
const floodFactor = 10

// maxURLBytes is the longest request URL a page may send; a longer one is refused unread.
const maxURLBytes = 8 << 10

// dispatch decides what needs no policy (a request past the page's cap, a method a crawler
// does not send, an overlong URL, the main frame taken elsewhere) and queues the rest for the
// policy workers. False: the page has flooded past any use and must end.
func (r *pageState) dispatch(ctx context.Context, ev *fetch.EventRequestPaused, queue chan<- *fetch.EventRequestPaused) bool {
	n := r.requests.Add(1)
	var method, u string
	if ev.Request != nil {
		method, u = ev.Request.Method, ev.Request.URL
	}
	switch {
	case n > floodFactor*(r.maxRequests+1):
		r.block(ctx, ev, "request flood: page ended")
		return false
	case method != "" && method != "GET":
		r.block(ctx, ev, "method") // a crawler only reads (one reason, whatever the method: the counts stay small)
	case len(u) > maxURLBytes:
		r.block(ctx, ev, "URL too long")
	case ev.ResourceType == network.ResourceTypeDocument && ev.FrameID == r.mainFrame && withoutFragment(u) != r.url:
		// window.location = …: the DOM read must stay the named page's. Where it went is
		// kept, as a link the page gives.
		r.mu.Lock()
		if len(r.navigations) < 20 {
			r.navigations = append(r.navigations, u)
		}
		r.blocked["navigation away"]++
		r.mu.Unlock()
		// 204 No Content: the browser stays on the page. A failed request would put Chrome's
		// error page in the main frame, and that would be read as the DOM.
		if _, err := chromedp.Call(ctx, fetch.FulfillRequest, fetch.FulfillRequestParams{RequestID: ev.RequestID, ResponseCode: 204}); err != nil && ctx.Err() == nil {
			r.fail("hold a navigation: " + err.Error())
		}
	case n > r.maxRequests+1: // +1: the page's own document
		r.block(ctx, ev, "request cap")
	default:
		queue <- ev // room for every request under the cap: never blocks
	}
	return true
}

// answer decides one paused request with the policy, within the page's byte budget.
func (r *pageState) answer(ctx context.Context, ev *fetch.EventRequestPaused, policy Policy) {
	req := Request{ResourceType: string(ev.ResourceType)}
	if ev.Request != nil {
		req.URL, req.Method = ev.Request.URL, ev.Request.Method
	}
	var a Answer
	if r.budget > 0 && r.bytes.Load() >= r.budget {
		a.Block = "byte budget"
	} else if ctx.Err() == nil {
		a = policy(ctx, req)
		if a.Release != nil {
			defer a.Release()
		}
	} else {
		a.Block = "page ended"
	}
	if a.Block == "" && r.budget > 0 && r.bytes.Add(int64(len(a.Body))) > r.budget && ev.ResourceType != network.ResourceTypeDocument {
		a = Answer{Block: "byte budget"}
	}
	if a.Block != "" {
		r.block(ctx, ev, a.Block)
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

// block fails one request for a reason, counted.
func (r *pageState) block(ctx context.Context, ev *fetch.EventRequestPaused, why string) {
	r.mu.Lock()
	r.blocked[why]++
	r.mu.Unlock()
	if _, err := chromedp.Call(ctx, fetch.FailRequest, fetch.FailRequestParams{RequestID: ev.RequestID,
		ErrorReason: network.ErrorReasonBlockedByClient}); err != nil && ctx.Err() == nil {
		r.fail("block " + why + ": " + err.Error())
	}
}

func (r *pageState) fail(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.errs) < 20 {
		r.errs = append(r.errs, msg)
	}
}

func withoutFragment(u string) string {
	s, _, _ := strings.Cut(u, "#")
	return s
}
