package testenv

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/trawlerdev/trawler/internal/render"
)

// Browser starts headless Chromium for a test that looks at a page as a user would (a report,
// a replayed archive) and returns a chromedp context, ended with the test. Pages it opens are
// on loopback or local files only.
func Browser(t testing.TB) context.Context {
	t.Helper()
	path, err := render.Find("")
	if err != nil {
		t.Fatalf("testenv: Chromium is needed (make up installs it): %v", err)
	}
	flags := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.WindowSize(1400, 1000),
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1"))
	actx, acancel := chromedp.NewExecAllocator(context.Background(), flags...)
	ctx, cancel := chromedp.NewContext(actx)
	ctx, tcancel := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(func() { tcancel(); cancel(); acancel() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("testenv: start Chromium: %v", err)
	}
	return ctx
}
