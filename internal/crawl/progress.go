package crawl

import "time"

// CrawlProgress is a crawl's progress, the one type for it end to end: counted from Postgres
// (store.CrawlProgress), answered by the crawl workflow's progress query and result and by
// `trawler status`, and served by GET /api/v1/stats, which adds what costs a scan
// (Duplicates, NearDuplicates, RobotsBlocked, Throughput).
type CrawlProgress struct {
	CrawlID    string           `json:"crawlId"`
	State      CrawlState       `json:"state"`
	Admitted   int64            `json:"admitted"` // URLs admitted to the frontier
	Fetched    int64            `json:"fetched"`  // URLs fetched at least once
	Pages      int64            `json:"pages"`    // documents stored
	Errors     int64            `json:"errors"`   // fetches that failed (network, 5xx, 429)
	Dead       int64            `json:"dead"`     // dead-lettered URLs
	Pending    int64            `json:"pending"`  // queued + claimed + fetched-not-processed + renders waiting
	Renders    int64            `json:"renders,omitempty"`
	Hosts      int64            `json:"hosts"`                   // hosts with admitted URLs
	Bytes      int64            `json:"bytes"`                   // body bytes fetched
	ErrorClass map[string]int   `json:"errorsByClass,omitempty"` // failed fetches: 5xx, 429, 408, network, timeout
	ByState    map[URLState]int `json:"byState"`                 // URLs by state (queued, claimed, fetched, done, …)
	Skipped    map[string]int   `json:"skipped"`                 // by reason
	Rejected   map[string]int   `json:"rejected,omitempty"`      // links refused at admission, by reason
	// PagesPerSec is the average fetch rate from the first fetch to the last (AvgPagesPerSec).
	PagesPerSec float64    `json:"pagesPerSec"`
	FirstFetch  *time.Time `json:"firstFetch,omitempty"`
	LastFetch   *time.Time `json:"lastFetch,omitempty"`
	// Waiting is what the pending URLs wait on: claims past their TTL, pages awaiting
	// processing, due URLs, each with how long the longest has waited (seconds).
	Waiting *Waiting `json:"waiting,omitempty"`
	// Set by the crawl workflow.
	InvalidSeed []SeedError     `json:"invalidSeeds,omitempty"`
	StopReason  string          `json:"stopReason,omitempty"` // why it stopped before it was drained (StopBy*)
	Controls    []ControlResult `json:"controls,omitempty"`   // the latest add-seeds, replay and block results
	UpdatedAt   time.Time       `json:"updatedAt"`
	// Set by the API's statistics (store.CrawlStats).
	Duplicates     int64       `json:"duplicates,omitempty"`     // documents duplicating an earlier one
	NearDuplicates int64       `json:"nearDuplicates,omitempty"` // of which SimHash or MinHash matches
	RobotsBlocked  int64       `json:"robotsBlocked,omitempty"`
	Throughput     *Throughput `json:"throughput,omitempty"`
}

// AvgPagesPerSec is the crawl's average fetch rate, from its first fetch to its last (0 before
// two fetches): the one place it is computed.
func (p CrawlProgress) AvgPagesPerSec() float64 {
	if p.FirstFetch == nil || p.LastFetch == nil {
		return 0
	}
	if secs := p.LastFetch.Sub(*p.FirstFetch).Seconds(); secs > 0 {
		return float64(p.Fetched) / secs
	}
	return 0
}

// Waiting is what a crawl's pending URLs wait on and for how long the longest has waited, so a
// stall after a worker died shows as numbers instead of a guess.
type Waiting struct {
	ExpiredClaims int     `json:"expiredClaims"` // claimed, TTL run out: their claimer died and nothing took them back
	OldestClaimS  float64 `json:"oldestClaimS"`  // seconds since the oldest claim
	Unprocessed   int     `json:"unprocessed"`   // fetched, awaiting processing
	OldestFetchS  float64 `json:"oldestFetchS"`  // seconds since the oldest of them was fetched
	OldestDueS    float64 `json:"oldestDueS"`    // seconds the longest-due queued URL has waited for its host
	// Held names the URLs held longest (claimed for a fetch, or fetched and awaiting their
	// processing), a few of each: what a crawl that does not end waits on, by whom, since when.
	Held []HeldURL `json:"held,omitempty"`
}

// HeldURL is a URL a crawl's end waits on.
type HeldURL struct {
	URL    string   `json:"url"`
	State  URLState `json:"state"`        // claimed or fetched
	By     string   `json:"by,omitempty"` // the claim's owner: a fetch lease, a processing child
	SinceS float64  `json:"sinceS"`       // seconds since it entered the state
}

// Throughput is a crawl's fetch rate in pages per second.
type Throughput struct {
	Now  float64 `json:"now"`  // over the last minute
	Avg  float64 `json:"avg"`  // first to last fetch
	Peak float64 `json:"peak"` // the busiest minute
}
