package crawl

// Reasons a URL is skipped (urls.skip_reason, counted as skip:<reason>) that the stage
// deciding them and the tests reading them both name.
const (
	// SkipBudget: a new URL past the crawl's maxPages or its host's maxPagesPerHost.
	SkipBudget = "budget"
	// SkipMaxHosts: a URL of a host past the crawl's maxHosts.
	SkipMaxHosts = "maxHosts"
	// SkipCrawlDelay: a URL whose host's robots.txt Crawl-delay is over the crawl's
	// maxCrawlDelay (never fetched faster than asked).
	SkipCrawlDelay = "robots.txt Crawl-delay over maxCrawlDelay"
)
