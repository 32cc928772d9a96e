package admit

import (
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/store"
)

// Budget is admission's rule for URLs new to a crawl (store.BudgetRule), earlier ones taking
// the room first: a URL of a host the crawl does not have yet is skipped once the crawl has
// maxHosts hosts (crawl.SkipMaxHosts); any other is skipped once the crawl has admitted
// maxPages URLs or its host maxPagesPerHost (crawl.SkipBudget). Requisites are part of pages
// already admitted, so they are admitted free of the page budgets: those a page names itself
// (crawl.SourceEmbed, no hop) always — they are bounded per page (requisites.maxPerPage) —
// and those a stylesheet names or a requisite redirects to while the crawl's free requisites
// stay under perPage for each page admitted so far, the most its pages could name
// themselves, so hostile stylesheets cannot name files without end; past that they count
// like pages. maxHosts holds for all. The store reads the budgets under the crawl row's lock and records the verdicts.
func Budget(perPage int) store.BudgetRule {
	return func(b store.Budgets, fresh []store.Candidate) []store.BudgetVerdict {
		return budget(b, fresh, int64(perPage))
	}
}

func budget(b store.Budgets, fresh []store.Candidate, perPage int64) []store.BudgetVerdict {
	verdicts := make([]store.BudgetVerdict, len(fresh))
	perHost := make(map[string]int, len(b.HostAdmitted))
	for h, n := range b.HostAdmitted {
		perHost[h] = n
	}
	admitted, hosts, free := b.Admitted, b.Hosts, b.Requisites
	for i, c := range fresh {
		n, known := perHost[c.Host]
		switch {
		case !known && b.MaxHosts > 0 && hosts >= b.MaxHosts:
			verdicts[i].Skip = crawl.SkipMaxHosts
			continue
		case c.Source == crawl.SourceEmbed && (c.Hops == 0 || free < admitted*perPage):
			verdicts[i].Free = true
			free++
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
