package crawl

// Render names the pages a crawl renders: those of Hosts (and their subdomains), and those
// whose normalized URL matches one of Patterns (Go regexps).
type Render struct {
	Hosts    []string `json:"hosts,omitempty"`
	Patterns []string `json:"patterns,omitempty"`
}

// NearDup configures near-duplicate detection (exact duplicates are always marked).
type NearDup struct {
	Off            bool    `json:"off,omitempty"`
	SimHashBits    int     `json:"simhashBits,omitempty"`    // SimHash match: at most this many bits apart (1–3, default 3)
	MinHashJaccard float64 `json:"minhashJaccard,omitempty"` // MinHash match: estimated Jaccard at least this (default 0.9)
}

// WARC configures the crawl's WARC output.
type WARC struct {
	Off      bool     `json:"off,omitempty"`
	MaxBytes int64    `json:"maxBytes,omitempty"` // a file is closed once it reaches this size (default 1 GB)
	MaxAge   Duration `json:"maxAge,omitempty"`   // records wait at most this long for a file to fill (default 10m)
}

// Traps are the trap rules applied to discovered links; zero fields take generous defaults
// (16 path segments, a segment at most 3 times, dates within 3 years of today).
type Traps struct {
	MaxPathDepth      int `json:"maxPathDepth,omitempty"`
	MaxSegmentRepeats int `json:"maxSegmentRepeats,omitempty"`
	CalendarYears     int `json:"calendarYears,omitempty"`
}
