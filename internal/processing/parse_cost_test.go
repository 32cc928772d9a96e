package processing

import (
	"fmt"
	"net/url"
	"runtime"
	"strings"
	"testing"

	"github.com/trawlerdev/trawler/internal/parse"
)

// The parse budget reckons a page at parseBytesPerByte a body byte: parsing pages of the
// shapes that cost the most (many small elements, attribute-heavy tags, one flat run of text,
// deep nesting) allocates no more than that — all it allocates, so its peak is under it too.
func TestParseCostCoversWhatParsingAllocates(t *testing.T) {
	const size = 2 << 20
	shapes := map[string]func(i int) string{
		"paragraphs and links": func(i int) string {
			return fmt.Sprintf("<p>Paragraph %d, some words. <a href=\"/p/%d\">link %d</a></p>\n", i, i, i)
		},
		"tiny elements": func(i int) string { return "<b>x</b><i>y</i>" },
		"attributes": func(i int) string {
			return fmt.Sprintf(`<span class="c%d" data-a="1" data-b="2" id="s%d" title="t">z</span>`, i%9, i)
		},
		"flat text":    func(i int) string { return "plain words without any markup at all " },
		"deep nesting": func(i int) string { return strings.Repeat("<div>", 400) + "x" + strings.Repeat("</div>", 400) },
	}
	pu, _ := url.Parse("http://x.example/")
	for name, part := range shapes {
		var page strings.Builder
		page.WriteString("<html><head><title>t</title></head><body>")
		for i := 0; page.Len() < size; i++ {
			page.WriteString(part(i))
		}
		body := []byte(page.String())
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		if _, err := parse.Parse(body, "text/html", pu, 2000, parse.MaxRequisites, "trawlerbot"); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		runtime.ReadMemStats(&after)
		alloc := int64(after.TotalAlloc-before.TotalAlloc) + int64(len(body))
		t.Logf("%s: %.1f bytes a body byte", name, float64(alloc)/float64(len(body)))
		if cost := ParseCost(int64(len(body)), 10<<20); alloc > cost {
			t.Errorf("%s: parsing %d bytes allocated %d, over its cost %d", name, len(body), alloc, cost)
		}
	}
}
