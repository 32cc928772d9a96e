package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/store"
)

// A host or reason from a crawled page cannot close the report's script or inject markup, and
// the JSON holds the figures with the spec as recorded.
func TestTheReportKeepsCrawledStringsInert(t *testing.T) {
	first, last := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC), time.Date(2026, 11, 24, 10, 1, 40, 0, time.UTC)
	evil := `</script><script>alert(1)</script><b>x`
	f := &store.CrawlFigures{Crawl: "c", State: "done", Spec: json.RawMessage(`{"seeds":["http://a.test/"],"scope":"any","robotsOverride":["mine.test"],
			"headers":{"Authorization":"Bearer SECRET-TOKEN"},"proxy":"http://user:PROXY-PASSWORD@proxy.test:3128"}`),
		First: &first, Last: &last, Pages: 50, Requests: 60, Errors: 10, BucketSeconds: 1,
		TopHosts: []store.Count{{Key: evil, N: 3}}, Skips: []store.Count{{Key: evil, N: 1}},
		Politeness: []store.HostPace{{Host: evil, Requests: 3, MinGapMS: 500}}, Seeds: []store.Seed{{URL: "http://a.test/" + evil, State: "done", Status: 200}}}
	r := New(f, last)
	var html bytes.Buffer
	if err := r.HTML(&html); err != nil {
		t.Fatal(err)
	}
	page := html.String()
	if n := strings.Count(page, "<script>"); n != 2 {
		t.Errorf("the page holds %d <script> elements; want the library's and the report's", n)
	}
	if strings.Contains(page, "<b>x") || strings.Contains(page, "alert(1)</script>") {
		t.Error("a crawled string came through unescaped")
	}
	if !strings.Contains(page, "robots.txt set aside for</b> mine.test") {
		t.Error("the report does not say whose robots.txt the crawl set aside")
	}
	var js bytes.Buffer
	if err := r.JSON(&js); err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back["pagesPerSecond"].(float64) != 0.5 || back["spec"].(map[string]any)["scope"] != "any" || back["pages"].(float64) != 50 {
		t.Errorf("the JSON reads %v", back)
	}
	// The spec's secrets stay out of both: header names and that a proxy is set, no values.
	for _, out := range []string{page, js.String()} {
		if strings.Contains(out, "SECRET-TOKEN") || strings.Contains(out, "PROXY-PASSWORD") || strings.Contains(out, "proxy.test") {
			t.Error("the report shows a header's value or the proxy's address")
		}
	}
	if h := back["spec"].(map[string]any)["headers"].([]any); len(h) != 1 || h[0] != "Authorization" || back["spec"].(map[string]any)["proxied"] != true {
		t.Errorf("the JSON's spec: %v", back["spec"])
	}
	var nonced bytes.Buffer
	if err := r.HTMLWithNonce(&nonced, "N0NCE"); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(nonced.String(), `nonce="N0NCE"`); n != 3 {
		t.Errorf("%d elements carry the nonce; want the style and the two scripts", n)
	}
}

func TestTheTimelineRunsEvenly(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	got := fillGaps([]store.TimePoint{{At: t0, Pages: 3}, {At: t0.Add(3 * time.Second), Pages: 1}}, time.Second)
	if len(got) != 4 || got[1].Pages != 0 || !got[2].At.Equal(t0.Add(2*time.Second)) || got[3].Pages != 1 {
		t.Errorf("filled %+v", got)
	}
}
