package crawl

import "testing"

// Every host workflow starts the same way: ID with the deployment's prefix, the hosts' own
// queue (never the crawl workflows'), and its search attributes (Host, HostState; CrawlID when a crawl woke it) — an
// operator's signal to a sleeping host included, which used to start it with none.
func TestHostStartAlwaysCarriesSearchAttributes(t *testing.T) {
	for _, crawlID := range []string{"c1", ""} {
		o := HostStart("demo/", "a.test:8080", crawlID, "trawler")
		if o.ID != "demo/host/a.test:8080" || o.TaskQueue != "trawler-hosts" || o.StaticSummary == "" {
			t.Errorf("crawl %q: %+v", crawlID, o)
		}
		attrs := o.TypedSearchAttributes
		if h, ok := attrs.GetKeyword(SearchHost); !ok || h != "a.test:8080" {
			t.Errorf("crawl %q: Host %q %v", crawlID, h, ok)
		}
		if s, ok := attrs.GetKeyword(SearchHostState); !ok || s != string(HostActive) {
			t.Errorf("crawl %q: HostState %q %v", crawlID, s, ok)
		}
		if c, ok := attrs.GetKeyword(SearchCrawlID); ok != (crawlID != "") || c != crawlID {
			t.Errorf("crawl %q: CrawlID %q %v", crawlID, c, ok)
		}
	}
}
