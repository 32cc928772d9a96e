package crawl

import "time"

// PageRef is a fetched page awaiting processing: keys, never bodies.
type PageRef struct {
	CrawlID     string `json:"crawlId"`
	Hash        []byte `json:"hash"`
	URL         string `json:"url"`
	FinalURL    string `json:"finalUrl,omitempty"`
	BodyKey     string `json:"bodyKey"`
	ContentType string `json:"contentType"`
	RobotsTag   string `json:"robotsTag,omitempty"` // X-Robots-Tag directives that apply to us
	ContentHash []byte `json:"contentHash"`
	Depth       int    `json:"depth"`
	Size        int64  `json:"size"`
	Change      Change `json:"change,omitempty"`   // what this fetch found, for the recrawl schedule
	RecrawlS    int    `json:"recrawlS,omitempty"` // the URL's recrawl interval before this fetch, seconds
	HintS       int    `json:"hintS,omitempty"`    // its sitemap changefreq interval, seconds
}

// ProcessInput is a batch of pages the crawl's sweep found unprocessed (ProcessPageWorkflow).
type ProcessInput struct {
	Host      string    `json:"host,omitempty"`
	Pages     []PageRef `json:"pages,omitempty"`
	TaskQueue string    `json:"taskQueue,omitempty"` // the process queue
}

// CrawlProcessing names one of a crawl's processing children: it claims the crawl's fetched
// pages, whatever their host, under Owner for up to For, and ends sooner once the crawl is
// over and nothing is left to process.
type CrawlProcessing struct {
	CrawlID   string        `json:"crawlId"`
	Owner     string        `json:"owner"`
	For       time.Duration `json:"for"`
	TaskQueue string        `json:"taskQueue,omitempty"` // the process queue
}

// ProcessResult counts what processing did.
type ProcessResult struct {
	Documents  int `json:"documents"`
	Links      int `json:"links"`
	Admitted   int `json:"admitted"`
	Duplicates int `json:"duplicates"` // links to URLs already in the frontier
	Rejected   int `json:"rejected"`
	// Documents that duplicate an earlier one: all of them, and those found by a near-duplicate
	// detector (not byte-identical).
	DuplicateDocs  int `json:"duplicateDocs,omitempty"`
	NearDuplicates int `json:"nearDuplicates,omitempty"`
	Failed         int `json:"failed"`
}

// Plus is r and o counted together (a processing that ran several batches).
func (r ProcessResult) Plus(o ProcessResult) ProcessResult {
	r.Documents += o.Documents
	r.Links += o.Links
	r.Admitted += o.Admitted
	r.Duplicates += o.Duplicates
	r.Rejected += o.Rejected
	r.DuplicateDocs += o.DuplicateDocs
	r.NearDuplicates += o.NearDuplicates
	r.Failed += o.Failed
	return r
}

// SeedError is a seed that was not admitted, and why.
type SeedError struct {
	Seed   string `json:"seed"`
	Reason string `json:"reason"`
}

// Claimed is a URL claimed for fetching: what a fetch lease carries of it.
type Claimed struct {
	CrawlID      string `json:"crawlId"`
	Hash         []byte `json:"hash"`
	URL          string `json:"url"`
	Depth        int    `json:"depth"`
	Hops         int    `json:"hops"`
	Attempts     int    `json:"attempts"`
	FetchCount   int    `json:"fetchCount"`
	ETag         string `json:"etag,omitempty"`
	LastModified string `json:"lastModified,omitempty"`
	Source       Source `json:"source,omitempty"`
	ContentHash  []byte `json:"contentHash,omitempty"` // of the last 2xx body: a recrawl compares
	RecrawlS     int    `json:"recrawlS,omitempty"`    // current recrawl interval, seconds
	HintS        int    `json:"hintS,omitempty"`       // sitemap changefreq interval, seconds
	GoneCount    int    `json:"goneCount,omitempty"`   // consecutive 404/410 answers
	// BodyKey is where the last 2xx body is stored: an unchanged body points there again.
	BodyKey string `json:"bodyKey,omitempty"`
}
