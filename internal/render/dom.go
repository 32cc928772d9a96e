package render

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// domWorld names the isolated world the DOM is read in.
const domWorld = "trawler-dom"

// readDOM serializes the page's DOM and cuts it to max bytes inside the page, so no more than
// that crosses the pipe to the worker. The script runs in an isolated world: it shares the
// page's DOM but not its JavaScript, so a page that redefines outerHTML, slice or JSON on its
// own prototypes cannot change what is read or make it larger.
func readDOM(ctx context.Context, max int) (string, bool, error) {
	// Characters, not bytes, in the page: at most max UTF-16 units, which the worker then cuts
	// to max bytes of UTF-8.
	script := fmt.Sprintf(`(() => {
		const root = document.documentElement;
		if (!root) return ["", false];
		const html = root.outerHTML;
		return html.length > %[1]d ? [html.slice(0, %[1]d), true] : [html, false];
	})()`, max)
	value, err := evalIsolated(ctx, domWorld, script)
	if err != nil {
		return "", false, fmt.Errorf("serialize: %w", err)
	}
	var pair [2]json.RawMessage
	var dom string
	var cut bool
	if err := json.Unmarshal(value, &pair); err != nil {
		return "", false, fmt.Errorf("serialize: %w", err)
	}
	if err := json.Unmarshal(pair[0], &dom); err != nil {
		return "", false, fmt.Errorf("serialize: %w", err)
	}
	_ = json.Unmarshal(pair[1], &cut)
	if len(dom) > max {
		dom, cut = dom[:max], true
	}
	return strings.ToValidUTF8(dom, "\uFFFD"), cut, nil
}

// evalIsolated runs script in an isolated world named world of the main frame and returns its
// value: the world shares the page's DOM but not its JavaScript, so the page's scripts cannot
// change what the script reads.
func evalIsolated(ctx context.Context, world, script string) (json.RawMessage, error) {
	tree, err := chromedp.Call(ctx, page.GetFrameTree, cdp.Empty{})
	if err != nil {
		return nil, fmt.Errorf("frame tree: %w", err)
	}
	if tree.FrameTree == nil || tree.FrameTree.Frame == nil {
		return nil, fmt.Errorf("no main frame")
	}
	w, err := chromedp.Call(ctx, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{FrameID: tree.FrameTree.Frame.ID, WorldName: world})
	if err != nil {
		return nil, fmt.Errorf("isolated world: %w", err)
	}
	byValue := true
	res, err := chromedp.Call(ctx, runtime.Evaluate, runtime.EvaluateParams{Expression: script, ContextID: w.ExecutionContextID,
		ReturnByValue: &byValue})
	if err != nil {
		return nil, err
	}
	if res.ExceptionDetails != nil {
		return nil, fmt.Errorf("%s", res.ExceptionDetails.Text)
	}
	if res.Result == nil {
		return nil, fmt.Errorf("no result")
	}
	return json.RawMessage(res.Result.Value), nil
}
