package admit

import (
	"slices"
	"testing"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/store"
)

// New URLs take a crawl's room in the order given: past maxHosts a URL of a host the crawl
// does not have is skipped (its known hosts still take URLs), past maxPagesPerHost its host's
// URLs, past maxPages every URL; the budgets the store read are left as they were.
func TestBudgetGivesTheRoomInOrder(t *testing.T) {
	b := store.Budgets{MaxPages: 5, Admitted: 1, MaxPerHost: 2, MaxHosts: 2, Hosts: 1, HostAdmitted: map[string]int{"a.test": 1}}
	c := func(host string) store.Candidate { return store.Candidate{Host: host} }
	got := Budget(b, []store.Candidate{c("a.test"), c("a.test"), c("b.test"), c("c.test"), c("b.test"), c("b.test"), c("a.test")})
	want := []string{"", crawl.SkipBudget, "", crawl.SkipMaxHosts, "", crawl.SkipBudget, crawl.SkipBudget}
	if !slices.Equal(got, want) {
		t.Errorf("verdicts %q, want %q", got, want)
	}
	if b.HostAdmitted["a.test"] != 1 || len(b.HostAdmitted) != 1 {
		t.Errorf("the rule changed the budgets it was given: %v", b.HostAdmitted)
	}
	// The crawl's own cap: 5 URLs in all, 1 admitted before.
	b = store.Budgets{MaxPages: 3, Admitted: 1}
	got = Budget(b, []store.Candidate{c("x.test"), c("y.test"), c("z.test")})
	if want := []string{"", "", crawl.SkipBudget}; !slices.Equal(got, want) {
		t.Errorf("maxPages: %q, want %q", got, want)
	}
	// No budgets: everything enters.
	if got := Budget(store.Budgets{}, []store.Candidate{c("x.test"), c("x.test")}); !slices.Equal(got, []string{"", ""}) {
		t.Errorf("no budgets: %q", got)
	}
}
