// Package pacing owns a host's schedule: how its requests are spaced (the pace and its
// sources — the crawl's delay and concurrency, its throttle, robots.txt's Crawl-delay, the
// operator's and the auto-throttle's — by the one rule, Slowest), the margins a booking adds,
// per-IP politeness, and the bookings themselves. Schedule is the one way to book, settle,
// push, defer or give back a host's request time; the store implements its narrow surface
// (Store) and nothing else writes a host's next start (hosts.next_request_at). Fetch leases
// and rendered pages' subresources are its clients; neither knows the other.
package pacing
