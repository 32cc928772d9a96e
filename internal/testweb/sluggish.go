package testweb

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
)

// ---- sluggish.test (Config.Sluggish): a server that struggles for a while, then recovers. ----
//
// Its pages answer in SluggishFast, except the SluggishSlow ones from its page request number
// SluggishFrom on: a crawler that adapts its gap to the response time (autoThrottle) asks it
// less often while it struggles and more often again once it recovers; the audit shows the
// gaps. Linked from nowhere: seed it.

type sluggishSite struct {
	w     *Web
	pages atomic.Int64 // page requests answered so far
}

// sluggish.test's shape: SluggishPages pages; page requests SluggishFrom to SluggishFrom +
// SluggishCount - 1 (1-based, in arrival order) answer in SluggishSlow, the rest in
// SluggishFast.
const (
	SluggishPages = 24
	SluggishFrom  = 9
	SluggishCount = 8
	SluggishFast  = 10 * time.Millisecond
	SluggishSlow  = 800 * time.Millisecond
)

func (s *sluggishSite) host() string { return "sluggish.test" }

func (s *sluggishSite) robots() robotsSpec {
	return robotsSpec{profile: "sluggish", status: 200, body: "User-agent: *\nAllow: /\n"}
}

func (s *sluggishSite) sitemapPages() []string { return nil }

func (s *sluggishSite) serve(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	i := 0
	if p != "/" {
		if _, err := fmt.Sscanf(strings.TrimPrefix(p, "/"), "%d", &i); err != nil || i < 1 || i >= SluggishPages || fmt.Sprintf("/%d", i) != p {
			http.NotFound(w, r) // (a crawler's look for /sitemap.xml is not a page request)
			return
		}
	}
	n := s.pages.Add(1)
	wait := SluggishFast
	if n >= SluggishFrom && n < SluggishFrom+SluggishCount {
		wait = SluggishSlow
	}
	time.Sleep(wait)
	var links []link
	if i == 0 { // the front page links every page, so they are all due at once after it
		for j := 1; j < SluggishPages; j++ {
			links = append(links, link{href: fmt.Sprintf("/%d", j), text: fmt.Sprintf("page %d", j)})
		}
	}
	htmlPage(w, doc{title: fmt.Sprintf("sluggish.test page %d", i),
		paragraphs: []string{fmt.Sprintf("Page %d of a server that struggles for a while, answering in %s.", i, wait)}, links: links})
}

// page keeps sluggish.test out of the truth: its test says what it expects itself.
func (s *sluggishSite) page(p, q string) pageInfo { return pageInfo{kind: pageOther} }
