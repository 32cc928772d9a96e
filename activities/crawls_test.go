package activities

import (
	"testing"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/urlnorm"
)

// Crawled URLs may name only the allowed ports (80 and 443 by default): a link to
// http://host:6379/ or :22 is refused at admission, whatever its address.
func TestAdmissionRefusesPortsNotAllowed(t *testing.T) {
	c := &Crawls{Norm: urlnorm.New(urlnorm.Default()), Ports: []int{80, 443}}
	ci := c.build("c", crawl.Spec{Seeds: []string{"http://a.test/"}, Scope: crawl.ScopeAny}.WithDefaults())
	for raw, want := range map[string]string{
		"http://a.test/": "", "https://a.test/x": "", "http://a.test:443/": "", "https://a.test:80/": "",
		"http://a.test:6379/": rejectPort, "https://a.test:22/": rejectPort, "http://[2001:4860::8888]:8080/": rejectPort,
	} {
		n, err := c.Norm.NormalizeRequest(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := ci.admissible(c.candidate(n, 0, 0, crawl.SourceLink)); got != want {
			t.Errorf("%s: %q, want %q", raw, got, want)
		}
	}
	open := &Crawls{Norm: c.Norm} // no list: any port
	if got := open.build("c", crawl.Spec{Seeds: []string{"http://a.test/"}, Scope: crawl.ScopeAny}.WithDefaults()).admissible(open.candidate("http://a.test:8080/", 0, 0, crawl.SourceLink)); got != "" {
		t.Errorf("no port list: %q", got)
	}
}
