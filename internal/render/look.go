package render

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// The viewport Browser.Look renders in: a common desktop window, so a page lays out as most
// of its readers see it, and two looks at one page compare pixel for pixel.
const (
	ViewportWidth  = 1280
	ViewportHeight = 800
)

// maxTextChars is the most visible text a look keeps, in UTF-16 units cut inside the page.
const maxTextChars = 1 << 20

// Seen is what a page showed: a PNG screenshot of its viewport and its visible text.
type Seen struct {
	PNG  []byte
	Text string
}

// lookWorld names the isolated world the text is read in.
const lookWorld = "trawler-look"

// readLook takes the viewport's screenshot and reads the page's visible text (innerText, as
// laid out: hidden elements contribute nothing) in an isolated world, so the page's scripts
// cannot change what is read.
func readLook(ctx context.Context) (*Seen, error) {
	shot, err := chromedp.Call(ctx, page.CaptureScreenshot, page.CaptureScreenshotParams{Format: page.CaptureScreenshotFormatPng})
	if err != nil {
		return nil, fmt.Errorf("screenshot: %w", err)
	}
	value, err := evalIsolated(ctx, lookWorld, fmt.Sprintf(`(() => { const b = document.body; const t = b ? b.innerText : ""; return t.length > %[1]d ? t.slice(0, %[1]d) : t; })()`, maxTextChars))
	if err != nil {
		return nil, fmt.Errorf("visible text: %w", err)
	}
	var text string
	if err := json.Unmarshal(value, &text); err != nil {
		return nil, fmt.Errorf("visible text: %w", err)
	}
	return &Seen{PNG: shot.Data, Text: strings.ToValidUTF8(text, "\uFFFD")}, nil
}
