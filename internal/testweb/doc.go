// Package testweb is Trawler's own synthetic web: thousands of virtual hosts served from one
// loopback listener, chosen by the Host header, deterministic from a seed. Generic hosts form
// a link graph with same-host and cross-host links under a spread of robots.txt profiles;
// special hosts hold the hard cases (traps, redirects, hostile responses, Retry-After,
// duplicates, conditional GET, sitemaps, URL variants, markup oddities).
//
// Every request is audited (politeness gaps, concurrency, robots-first, disallowed fetches,
// repeats) in bounded memory, and Truth computes the expected crawl for a seed list, so tests
// can compare what the crawler did with what it should have done. The command ./testweb
// serves it standalone.
package testweb
