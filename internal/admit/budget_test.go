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
	got := skips(Budget(0)(b, []store.Candidate{c("a.test"), c("a.test"), c("b.test"), c("c.test"), c("b.test"), c("b.test"), c("a.test")}))
	want := []string{"", crawl.SkipBudget, "", crawl.SkipMaxHosts, "", crawl.SkipBudget, crawl.SkipBudget}
	if !slices.Equal(got, want) {
		t.Errorf("verdicts %q, want %q", got, want)
	}
	if b.HostAdmitted["a.test"] != 1 || len(b.HostAdmitted) != 1 {
		t.Errorf("the rule changed the budgets it was given: %v", b.HostAdmitted)
	}
	// The crawl's own cap: 5 URLs in all, 1 admitted before.
	b = store.Budgets{MaxPages: 3, Admitted: 1}
	got = skips(Budget(0)(b, []store.Candidate{c("x.test"), c("y.test"), c("z.test")}))
	if want := []string{"", "", crawl.SkipBudget}; !slices.Equal(got, want) {
		t.Errorf("maxPages: %q, want %q", got, want)
	}
	// No budgets: everything enters.
	if got := skips(Budget(0)(store.Budgets{}, []store.Candidate{c("x.test"), c("x.test")})); !slices.Equal(got, []string{"", ""}) {
		t.Errorf("no budgets: %q", got)
	}
	// A page's requisites are free of the page budgets (a full crawl still archives the
	// files its pages need), but a new host past maxHosts is not taken for one.
	full := store.Budgets{MaxPages: 1, Admitted: 1, MaxHosts: 1, Hosts: 1, HostAdmitted: map[string]int{"a.test": 1}}
	embed := func(host string) store.Candidate { return store.Candidate{Host: host, Source: crawl.SourceEmbed} }
	imported := embed("a.test")
	imported.Hops = 1 // named by a stylesheet: free while the crawl's requisites stay under perPage a page admitted
	v := Budget(2)(full, []store.Candidate{embed("a.test"), c("a.test"), embed("cdn.test"), imported, imported, imported})
	wantV := []store.BudgetVerdict{{Free: true}, {Skip: crawl.SkipBudget}, {Skip: crawl.SkipMaxHosts}, {Free: true}, {Skip: crawl.SkipBudget}, {Skip: crawl.SkipBudget}}
	if !slices.Equal(v, wantV) {
		t.Errorf("requisites: %+v, want %+v", v, wantV)
	}
	// Past that room, a stylesheet's files count like pages.
	full.Requisites, full.MaxPages, full.Admitted = 7, 4, 4
	if v := Budget(2)(full, []store.Candidate{imported, imported}); !slices.Equal(v, []store.BudgetVerdict{{Free: true}, {Skip: crawl.SkipBudget}}) {
		t.Errorf("past the requisites' room: %+v", v)
	}
}

func skips(v []store.BudgetVerdict) []string {
	out := make([]string, len(v))
	for i, x := range v {
		out[i] = x.Skip
	}
	return out
}
