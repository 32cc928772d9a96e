package pacing

import (
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
)

// URLKey names one URL of a crawl: a booking for its request reads its state with the slot.
type URLKey struct {
	CrawlID string
	Hash    []byte
}

// Slot is a booked request start and, when the booking was for a URL, that URL's state and its
// crawl's at booking time ("" when the URL is not in the frontier).
type Slot struct {
	Start      time.Time
	URLState   crawl.URLState
	CrawlState crawl.CrawlState
}

// Window is a run of a host's request time booked by one fetch lease: its requests start in
// [Start, End-gap], paced by the lease itself, and every other booking of the host (another
// attempt, a redirect from another host) starts at End or later. Start and End are on the
// local clock; Mark is End as the database holds it, which names the window to BookWindow and
// Settle exactly. Continues says the booking extended the caller's own window (nobody
// booked the host since). States holds, for the URLs named at booking, their state and their
// crawl's ("" when not in the frontier), keyed by WindowKey.
type Window struct {
	Start, End time.Time
	Mark       time.Time
	Continues  bool
	States     map[string]WindowState
}

// WindowState is a URL's state and its crawl's, and when they were read (on the local clock):
// when its window was booked, or when the URL was claimed.
type WindowState struct {
	URL   crawl.URLState
	Crawl crawl.CrawlState
	At    time.Time
	Epoch uint64 // the ControlWatch's epoch before they were read
}

// WindowKey is how Window.States names a URL.
func WindowKey(u URLKey) string { return u.CrawlID + "\x00" + string(u.Hash) }

// RenderSlot is a request start booked for a rendered page's subresource, or why none was.
type RenderSlot struct {
	Start      time.Time        // on the local clock; zero when not booked
	Booked     bool             // false: the crawl is not running, or the host's next start is past the page's deadline
	CrawlState crawl.CrawlState // the crawl's state at booking ("" when it is gone)
	// What names the booking to ReleaseRender: the host, its gap, and Start as the database
	// holds it.
	Host string
	Gap  time.Duration
	Mark time.Time
}
