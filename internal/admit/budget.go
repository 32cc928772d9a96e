package admit

import (
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/store"
)

// Budget is admission's rule for URLs new to a crawl (store.BudgetRule), earlier ones taking
// the room first: a URL of a host the crawl does not have yet is skipped once the crawl has
// maxHosts hosts (crawl.SkipMaxHosts); any other is skipped once the crawl has admitted
// maxPages URLs or its host maxPagesPerHost (crawl.SkipBudget). A requisite a page names
// itself (crawl.SourceEmbed, no hop) is admitted free of the page budgets: it is part of a
// page already admitted, and bounded per page (requisites.maxPerPage); what a stylesheet
// names, or a requisite redirects to, counts like a page, or a hostile stylesheet could name
// stylesheets without end; maxHosts holds for all. The store reads the budgets under the
// crawl row's lock and records the verdicts.
func Budget(b store.Budgets, fresh []store.Candidate) []store.BudgetVerdict {
	verdicts := make([]store.BudgetVerdict, len(fresh))
	perHost := make(map[string]int, len(b.HostAdmitted))
	for h, n := range b.HostAdmitted {
		perHost[h] = n
	}
	admitted, hosts := b.Admitted, b.Hosts
	for i, c := range fresh {
		n, known := perHost[c.Host]
		switch {
		case !known && b.MaxHosts > 0 && hosts >= b.MaxHosts:
			verdicts[i].Skip = crawl.SkipMaxHosts
			continue
		case c.Source == crawl.SourceEmbed && c.Hops == 0:
			verdicts[i].Free = true
			if !known {
				hosts++
				perHost[c.Host] = 0
			}
			continue
		case (b.MaxPages > 0 && admitted >= b.MaxPages) || (b.MaxPerHost > 0 && n >= b.MaxPerHost):
			verdicts[i].Skip = crawl.SkipBudget
			continue
		}
		if !known {
			hosts++
		}
		admitted++
		perHost[c.Host] = n + 1
	}
	return verdicts
}
