package policy

import (
	"testing"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/urlnorm"
)

// Crawled URLs may name only the allowed ports (80 and 443 by default): a link to
// http://host:6379/ or :22 is refused at admission, whatever its address.
func TestAdmissionRefusesPortsNotAllowed(t *testing.T) {
	c := &Crawls{Norm: urlnorm.New(urlnorm.Default()), Ports: []int{80, 443}}
	ci := c.Compile("c", crawl.Spec{Seeds: []string{"http://a.test/"}, Scope: crawl.ScopeAny}.WithDefaults())
	for raw, want := range map[string]string{
		"http://a.test/": "", "https://a.test/x": "", "http://a.test:443/": "", "https://a.test:80/": "",
		"http://a.test:6379/": RejectPort, "https://a.test:22/": RejectPort, "http://[2001:4860::8888]:8080/": RejectPort,
	} {
		n, err := c.Norm.NormalizeRequest(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := ci.Admissible(c.Candidate(n, 0, 0, crawl.SourceLink)); got != want {
			t.Errorf("%s: %q, want %q", raw, got, want)
		}
	}
	open := &Crawls{Norm: c.Norm} // no list: any port
	if got := open.Compile("c", crawl.Spec{Seeds: []string{"http://a.test/"}, Scope: crawl.ScopeAny}.WithDefaults()).Admissible(open.Candidate("http://a.test:8080/", 0, 0, crawl.SourceLink)); got != "" {
		t.Errorf("no port list: %q", got)
	}
}

// A robots.txt redirect hop is judged as a link: denied hosts and URLs, ports not allowed and
// other schemes are not followed; a host out of scope is, but without the crawl's headers.
func TestARobotsHopIsJudgedAndStrippedOutOfScope(t *testing.T) {
	c := &Crawls{Norm: urlnorm.New(urlnorm.Default()), Ports: []int{80, 443}}
	ci := c.Compile("c", crawl.Spec{Seeds: []string{"http://a.test/"}, Scope: crawl.ScopeHost, DenyHosts: []string{"evil.test"},
		DenyPatterns: []string{`/private-robots`}}.WithDefaults())
	for raw, want := range map[string]struct {
		why string
		own bool
	}{
		"https://a.test/robots.txt":        {"", true},
		"http://b.test/robots.txt":         {"", false},
		"http://evil.test/robots.txt":      {RejectDenied, false},
		"http://sub.evil.test/robots.txt":  {RejectDenied, false},
		"http://a.test/private-robots.txt": {RejectDenied, false},
		"http://b.test:6379/robots.txt":    {RejectPort, false},
		"ftp://a.test/robots.txt":          {RejectBadURL, false},
		"http:///robots.txt":               {RejectBadURL, false},
	} {
		why, own := ci.Hop(c.Candidate(raw, 0, 0, crawl.SourceSeed))
		if why != want.why || own != want.own {
			t.Errorf("%s: (%q, %v), want (%q, %v)", raw, why, own, want.why, want.own)
		}
	}
}

// The crawl's own headers go to the hosts it crawls pages of, never to a host a page's
// requisites are on.
func TestHeadersGoOnlyToHostsInScope(t *testing.T) {
	c := &Crawls{Norm: urlnorm.New(urlnorm.Default())}
	ci := c.Compile("c", crawl.Spec{Seeds: []string{"http://a.test/"}, Scope: crawl.ScopeHost,
		Headers: map[string]string{"X-Api-Key": "k"}}.WithDefaults())
	if h := ci.HeaderFor("a.test"); h.Get("X-Api-Key") != "k" {
		t.Errorf("in scope: %v", h)
	}
	if h := ci.HeaderFor("cdn.test"); h != nil {
		t.Errorf("a CDN got the crawl's headers: %v", h)
	}
	if !ci.InScope("a.test:80") || ci.InScope("cdn.test") {
		t.Error("InScope")
	}
}
