package store

// The store by aggregate: each type below owns the statements of one part of the data model,
// and a stage is handed the aggregates it uses (narrow interfaces of its own), never the whole
// Store. Each is a view of the Store, free to copy.

// Frontier is the frontier: urls rows, their claims, admission, the hosts waiting for work,
// and the fetched pages waiting for processing too long.
type Frontier struct{ s *Store }

// Frontier is the store's frontier aggregate.
func (s *Store) Frontier() Frontier { return Frontier{s: s} }

// Fetches is fetch records: each fetch's outcome, grouped commits, dead letters.
type Fetches struct{ s *Store }

// Fetches is the store's fetches aggregate.
func (s *Store) Fetches() Fetches { return Fetches{s: s} }

// Documents is documents: processed pages, their near-duplicate index and the payloads
// bodies are stored under.
type Documents struct{ s *Store }

// Documents is the store's documents aggregate.
func (s *Store) Documents() Documents { return Documents{s: s} }

// Hosts is hosts' rows other than their schedule (pacing's, HostSchedule): robots.txt and
// Crawl-delay, health and retirement, sitemap discovery, cookies.
type Hosts struct{ s *Store }

// Hosts is the store's hosts aggregate.
func (s *Store) Hosts() Hosts { return Hosts{s: s} }

// Renders is the render queue: pages waiting for the browser and their claims.
type Renders struct{ s *Store }

// Renders is the store's renders aggregate.
func (s *Store) Renders() Renders { return Renders{s: s} }

// Archive is WARC placements: what is archived where (fetches and rendered DOMs), and the
// archive's lock.
type Archive struct{ s *Store }

// Archive is the store's archive aggregate.
func (s *Store) Archive() Archive { return Archive{s: s} }

// Crawls is crawls' rows and the operator's controls on them: spec, state, liveness and
// progress, throttle, blocks, added seeds, replayed dead letters, rejection counts.
type Crawls struct{ s *Store }

// Crawls is the store's crawls aggregate.
func (s *Store) Crawls() Crawls { return Crawls{s: s} }

// Deletes is deleting a crawl: its rows, its objects' references, and the sweep's
// bookkeeping.
type Deletes struct{ s *Store }

// Deletes is the store's deletes aggregate.
func (s *Store) Deletes() Deletes { return Deletes{s: s} }

// Deliveries is deliveries rows and their dead letters: where each output of a crawl stands
// in the crawl's documents (their save order) and which batches it gave up on.
type Deliveries struct{ s *Store }

// Deliveries is the store's deliveries aggregate.
func (s *Store) Deliveries() Deliveries { return Deliveries{s: s} }

// Inspect is read-only views for operators: stats, records of a URL or host, figures for the
// report and exports.
type Inspect struct{ s *Store }

// Inspect is the store's inspect aggregate.
func (s *Store) Inspect() Inspect { return Inspect{s: s} }
