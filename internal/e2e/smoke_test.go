package e2e

import (
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/testweb"
)

func TestSmallCrawl(t *testing.T) {
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.Pages, wc.Specials = 3, 6, false
	wc.DefaultDelay = 200 * time.Millisecond
	s := newStack(t, wc)
	p := s.crawl(crawl.Spec{Seeds: s.web.Seeds(), Scope: crawl.ScopeAny, Delay: crawl.Duration(200 * time.Millisecond),
		RetryBase: crawl.Duration(time.Second), HostIdleTimeout: crawl.Duration(5 * time.Second), ProgressInterval: crawl.Duration(time.Second)}, 2*time.Minute)
	t.Logf("progress: %+v", p)
	rep := s.web.Audit().Report()
	t.Logf("audit totals: %+v", rep.Totals)
	truth := s.web.Truth(s.web.Seeds())
	t.Logf("truth pages: %d", len(truth.Pages))
}
