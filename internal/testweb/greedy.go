package testweb

import (
	"fmt"
	"net/http"
	"time"
)

// ---- slowpoke.test (Config.GreedyDelay): a robots.txt that asks for a day between requests. --
//
// Its robots.txt says Crawl-delay: 86400. A crawler caps what robots.txt may ask (the crawl's
// maxCrawlDelay), so it paces the host at the cap, not at a day: its five pages come one cap
// apart. The audit requires the cap (SlowpokeCap), not the day. Linked from nowhere: seed it.

type slowpokeSite struct{ w *Web }

// SlowpokeDelay is what slowpoke.test's robots.txt asks for; SlowpokeCap the gap its audit
// requires (a crawl of it must cap Crawl-delay at this).
const (
	SlowpokeDelay = 24 * time.Hour
	SlowpokeCap   = time.Second
)

// SlowpokePages are slowpoke.test's pages besides its front page.
var SlowpokePages = []string{"/1", "/2", "/3", "/4"}

func (s *slowpokeSite) host() string { return "slowpoke.test" }

func (s *slowpokeSite) robots() robotsSpec {
	return robotsSpec{profile: "slowpoke", status: 200, body: fmt.Sprintf("User-agent: *\nCrawl-delay: %d\n", int(SlowpokeDelay/time.Second)),
		rules: ruleset{crawlDelay: SlowpokeCap}}
}

func (s *slowpokeSite) sitemapPages() []string { return nil }

func (s *slowpokeSite) serve(w http.ResponseWriter, r *http.Request) {
	switch p := r.URL.Path; p {
	case "/":
		var links []link
		for _, l := range SlowpokePages {
			links = append(links, link{href: l, text: "page " + l})
		}
		htmlPage(w, doc{title: "slowpoke.test", paragraphs: []string{"A site that asks for a day between requests."}, links: links})
	case "/1", "/2", "/3", "/4":
		htmlPage(w, doc{title: "slowpoke.test" + p, paragraphs: []string{"Page " + p + " of a site that asks for a day between requests."}})
	default:
		http.NotFound(w, r)
	}
}

// page keeps slowpoke.test out of the truth: its test says what it expects itself.
func (s *slowpokeSite) page(p, q string) pageInfo { return pageInfo{kind: pageOther} }
