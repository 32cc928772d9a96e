package fetching

import (
	"time"
	"unicode/utf8"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/store"
)

// What a fetch lease is given (LeaseInput, from the host workflow) and what it hands back:
// its heartbeat, its result and the UI's view of it.

// MaxRedirects is how many redirect hops lead to a URL at most.
const MaxRedirects = 5

// LeaseInput is one fetch lease of a host: its pacing and how it claims. (The JSON
// names of renamed fields are kept for leases scheduled before the rename.)
type LeaseInput struct {
	Host          string        `json:"host"`
	Delay         time.Duration `json:"delay"`         // between request starts, before robots.txt's Crawl-delay
	MaxCrawlDelay time.Duration `json:"maxCrawlDelay"` // bounds the auto-throttle's delay (a Crawl-delay over a crawl's cap skips the host: withoutRequest)
	NotBefore     time.Time     `json:"notBefore"`     // no request starts earlier
	Concurrency   int           `json:"concurrency"`   // requests in flight at most (default 1)
	// Chunk is how many due URLs the lease claims at a time, each claim held for ClaimTTL.
	Chunk    int           `json:"topUp,omitempty"`
	ClaimTTL time.Duration `json:"lease,omitempty"`
	// Owner names the lease: its first and last claims are made as Owner, those between as
	// crawl.ChunkOwner(Owner), so whoever outlives the lease finds what it holds by owner.
	Owner string `json:"owner,omitempty"`
	// LeaseFor is how long the lease holds its host at most (see chunks.go).
	LeaseFor time.Duration `json:"leaseFor,omitempty"`
}

// A lease hands out three things, each a type of its own and each bounded, whatever the host
// serves: its heartbeat (LeaseBeat: its progress, under a kilobyte), its result (LeaseResult:
// what the host workflow decides on, and the view with the per-URL outcomes) and the UI's view
// (LeaseView). They nest so that their JSON is flat, in the order an operator reads it, with
// the keys it always had: recorded histories and a running lease's last heartbeat decode as
// they were written.

// LeaseView is what the Temporal UI shows of a lease, first in the heartbeat details under
// Pending Activities (without the outcomes) and then in its result: its progress, the last
// URL recorded, when the next request may start, and each URL's outcome, newest last, at most
// MaxOutcomes of them.
type LeaseView struct {
	Done            int          `json:"done"`
	Fetched         int          `json:"fetched"`
	Errors          int          `json:"errors"`
	Skipped         int          `json:"skipped"`
	LastURL         string       `json:"lastURL,omitempty"`
	NextSlot        *time.Time   `json:"nextSlot,omitempty"`
	Outcomes        []URLOutcome `json:"outcomes,omitempty"`
	OutcomesDropped int          `json:"outcomesDropped,omitempty"` // older outcomes left out
}

// LeaseFindings is what the host workflow decides on after a lease (workflows' hostRun.apply
// and run): counts, pacing facts and the host's health, never bodies.
type LeaseFindings struct {
	NotModified       int           `json:"notModified"`
	Deferred          int           `json:"deferred"`
	Requests          int           `json:"requests"`
	LateSlots         int           `json:"lateSlots,omitempty"`      // slots given up because this process woke too late
	LateDepartures    int           `json:"lateDepartures,omitempty"` // requests that left late: the next slot moved out
	PeakInFlight      int           `json:"peakInFlight"`
	LastRequestAt     time.Time     `json:"lastRequestAt"`
	CrawlDelay        time.Duration `json:"crawlDelay"`          // from robots.txt, as asked, of crawls that wait that long
	CrawlDelayCapped  bool          `json:"crawlDelayCapped"`    // a crawl skipped the host: its Crawl-delay is over the crawl's maxCrawlDelay
	AutoDelay         time.Duration `json:"autoDelay,omitempty"` // the gap the host's response times ask for (spec.autoThrottle)
	DeferUntil        time.Time     `json:"deferUntil"`          // the host asked us to wait (Retry-After)
	ConsecutiveErrors int           `json:"consecutiveErrors"`
	LastError         string        `json:"lastError,omitempty"` // clipped (crawl.ClipError)
	Answered          bool          `json:"answered,omitempty"`  // the host answered a request sensibly
	Gone              string        `json:"gone,omitempty"`      // why the host may be dead
	Retired           bool          `json:"retired,omitempty"`   // the host was retired (dead-site cleanup)
	// Dry: the lease ended because the host has no URL due, and its last claim
	// left the host waiting for the next admission; NextDue is when its next URL is due.
	Dry     bool       `json:"dry,omitempty"`
	NextDue *time.Time `json:"nextDue,omitempty"`
}

// LeaseResult is a lease's result, as the host workflow's history holds it: the view and the
// findings.
type LeaseResult struct {
	LeaseView
	LeaseFindings
}

// LeaseBeat is a lease's heartbeat: its result so far without the per-URL outcomes, its
// strings clipped to MaxBeatString, so under MaxBeatBytes whatever the host serves. Each beat
// that reaches the server is a write of the host workflow's state, so it carries no more than
// a retry goes on from: the counts and pacing facts. Where the retry resumes is in Postgres,
// not in the beat: its predecessor's unfinished URLs are still claimed under the lease's
// owners (ClaimAs takes them back first), and those it finished are no longer claimed. The
// server hands the last beat that landed to the retry (FetchBatch). (Beats of
// older leases carried their chunk too: a retry of one ignores it and reclaims the same way.)
type LeaseBeat struct {
	LeaseResult
}

// MaxBeatString bounds each string of a heartbeat (the last URL and error, why the host may be
// dead); the result keeps them as recorded.
const MaxBeatString = 120

// MaxBeatBytes is what a lease's heartbeat weighs at most, encoded.
const MaxBeatBytes = 1024

// beatOf is a result as its heartbeat carries it.
func beatOf(r LeaseResult) LeaseBeat {
	r.Outcomes = nil
	r.LastURL = clipEncoded(r.LastURL, MaxBeatString)
	r.LastError = clipEncoded(r.LastError, MaxBeatString)
	r.Gone = clipEncoded(r.Gone, MaxBeatString)
	return LeaseBeat{r}
}

// clipEncoded cuts s so that its JSON encoding is at most limit bytes, quotes aside, marking a
// cut with "…": Temporal's converter escapes <, > and &, control characters and invalid UTF-8
// in six bytes each (\u00XX), so a byte count of s alone does not bound it.
func clipEncoded(s string, limit int) string {
	n := 0
	for _, r := range s {
		n += encodedLen(r)
	}
	if n <= limit {
		return s
	}
	n = 0
	for i, r := range s {
		if n+encodedLen(r) > limit-len("…") {
			return s[:i] + "…"
		}
		n += encodedLen(r)
	}
	return s
}

// encodedLen is how many bytes encoding/json writes for r inside a string.
func encodedLen(r rune) int {
	switch {
	case r == '<' || r == '>' || r == '&' || r < 0x20 || r == 0x2028 || r == 0x2029 || r == utf8.RuneError:
		return 6
	case r == '"' || r == '\\':
		return 2
	}
	return utf8.RuneLen(r)
}

// MaxOutcomes bounds the per-URL outcomes a lease result carries: a busy host's lease stays
// a few kilobytes in its history.
const MaxOutcomes = 50

// URLOutcome is one URL of a lease as the UI shows it.
type URLOutcome struct {
	URL     string `json:"url"`
	Status  int    `json:"status,omitempty"` // 0: no answer
	Bytes   int64  `json:"bytes,omitempty"`
	MS      int64  `json:"ms"`
	Verdict string `json:"verdict"` // what became of it: fetched, done, recrawl, retry, skipped, dead (and why)
}

// outcomeOf says what became of a URL in a few words.
func outcomeOf(o store.FetchOutcome) URLOutcome {
	v := string(o.State)
	switch {
	case o.State == crawl.URLFetched:
		v = "fetched: to processing"
	case o.State == crawl.URLSkipped:
		v = "skipped: " + o.SkipReason
	case o.State == crawl.URLQueued && o.Err != "":
		v = "retry: " + o.Err
	case o.State == crawl.URLQueued:
		v = "recrawl"
	case o.State == crawl.URLDead:
		v = "dead: " + o.Err
	}
	if o.Note != "" {
		v += " (" + o.Note + ")"
	}
	v = crawl.Clip(v, 160)
	return URLOutcome{URL: o.URL, Status: o.Status, Bytes: o.Bytes, MS: o.Duration.Milliseconds(), Verdict: v}
}
