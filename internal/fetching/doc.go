// Package fetching is the fetch stage: one fetch lease claims a host's due URLs a chunk at a
// time and fetches them, request starts spaced by the host's delay (booked in Postgres, so
// every worker keeps them), robots.txt first when its cache has expired, bodies stored and
// outcomes recorded; redirect targets and sitemap entries go through the one admission path.
// It works over the narrow Store interface (store.Store in a worker, a fake in its tests) and
// reports through Hooks; activities.Fetcher is its Temporal-facing side.
package fetching
