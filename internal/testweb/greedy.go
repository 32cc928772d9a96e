package testweb

import (
	"fmt"
	"net/http"
	"time"
)

// ---- slowpoke.test (Config.GreedyDelay): a robots.txt that asks for a day between requests. --
//
// Its robots.txt says Crawl-delay: 86400. A crawl whose maxCrawlDelay is below that skips the
// host's URLs (robots.txt Crawl-delay over maxCrawlDelay): it never fetches faster than asked,
// so its audit requires the whole day between two requests. Linked from nowhere: seed it.
//
// ---- patient.test (Config.GreedyDelay): a robots.txt that asks for 45 s between requests. ----
//
// Under the default maxCrawlDelay (a day) its front page comes 45 s after robots.txt, and the
// /sitemap.xml a crawler looks for 45 s after that, each wait a durable timer of its host
// workflow. Linked from nowhere.

type slowpokeSite struct{ w *Web }

// SlowpokeDelay is what slowpoke.test's robots.txt asks for, PatientDelay patient.test's.
const (
	SlowpokeDelay = 24 * time.Hour
	PatientDelay  = 45 * time.Second
)

// SlowpokePages are slowpoke.test's pages besides its front page.
var SlowpokePages = []string{"/1", "/2", "/3", "/4"}

func (s *slowpokeSite) host() string { return "slowpoke.test" }

func (s *slowpokeSite) robots() robotsSpec {
	return robotsSpec{profile: "slowpoke", status: 200, body: fmt.Sprintf("User-agent: *\nCrawl-delay: %d\n", int(SlowpokeDelay/time.Second)),
		rules: ruleset{crawlDelay: SlowpokeDelay}}
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

type patientSite struct{ w *Web }

func (s *patientSite) host() string { return "patient.test" }

func (s *patientSite) robots() robotsSpec {
	return robotsSpec{profile: "patient", status: 200, body: fmt.Sprintf("User-agent: *\nCrawl-delay: %d\n", int(PatientDelay/time.Second)),
		rules: ruleset{crawlDelay: PatientDelay}}
}

func (s *patientSite) sitemapPages() []string { return nil }

func (s *patientSite) serve(w http.ResponseWriter, r *http.Request) {
	switch p := r.URL.Path; p {
	case "/":
		htmlPage(w, doc{title: "patient.test", paragraphs: []string{"A site that asks for 45 seconds between requests."}})
	default:
		http.NotFound(w, r)
	}
}

// page keeps patient.test out of the truth: its test says what it expects itself.
func (s *patientSite) page(p, q string) pageInfo { return pageInfo{kind: pageOther} }
