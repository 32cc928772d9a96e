package admit

import (
	"slices"
	"testing"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/policy"
	"github.com/trawlerdev/trawler/internal/urlnorm"
)

// A crawl's seeds are checked before it starts as its start would check them: malformed ones,
// hosts the crawl denies and ports not allowed are refused with their reasons, the others kept in order.
func TestCheckSeedsAsTheStartWould(t *testing.T) {
	c := &policy.Crawls{Norm: urlnorm.New(urlnorm.Default()), Ports: []int{80, 443}}
	spec := crawl.Spec{Scope: crawl.ScopeAny, DenyHosts: []string{"bad.test"},
		Seeds: []string{"http://a.test/", "ftp://a.test/", "http://www.bad.test/", "http://b.test:6379/", "https://b.test/x"}}.WithDefaults()
	good, invalid := CheckSeeds(c, spec)
	if want := []string{"http://a.test/", "https://b.test/x"}; !slices.Equal(good, want) {
		t.Errorf("good seeds %v, want %v", good, want)
	}
	reasons := map[string]string{}
	for _, e := range invalid {
		reasons[e.Seed] = e.Reason
	}
	if len(invalid) != 3 || reasons["http://www.bad.test/"] != policy.RejectScope || reasons["http://b.test:6379/"] != policy.RejectPort || reasons["ftp://a.test/"] == "" {
		t.Errorf("refused %+v", invalid)
	}
}
