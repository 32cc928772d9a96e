package testweb

import "time"

// ControlHost serves the audit, the truth and resets; it is never audited.
const ControlHost = "control.test"

// Config shapes the web. DefaultConfig gives the values the flags of ./testweb default to.
type Config struct {
	Hosts int // generic hosts h0000.test, h0001.test, …
	Pages int // pages per generic host (without LongTail)
	// LongTail sizes generic hosts like the web's: 70% have 1–5 pages, 25% 6–200 and 5%
	// 1,000–2,000 (about half of all pages); Pages is then ignored.
	LongTail bool
	// SeedEvery makes every SeedEvery-th generic host's front page a seed (0: h0000's only).
	SeedEvery    int
	Seed         uint64 // everything is deterministic from it
	Specials     bool   // serve the special hosts (trap.test, redirect.test, …)
	Bytes        bool   // serve bytes.test (legacy charsets, header bytes >= 0x80, …), linked from nowhere: seed it
	Formats      bool   // serve formats.test (PDF, feeds, text, sniffing, hostile PDFs), linked from nowhere: seed it
	GreedyDelay  bool   // serve slowpoke.test and patient.test, whose robots.txt ask for a day and 45 s between requests (linked from nowhere: seed them)
	Sluggish     bool   // serve sluggish.test, whose answers slow from 10 ms to 800 ms and recover (linked from nowhere: seed it)
	Cookies      bool   // serve cookie.test, which sets a session cookie and counts the pages requested with it (linked from nowhere: seed it)
	Scripts      bool   // serve js.test (links only its scripts add), tracker.test and jsbad.test (attacks on a renderer), linked from nowhere: seed them
	Signals      bool   // serve signals.test (per-scheme robots.txt, X-Robots-Tag, meta robots), linked from nowhere: seed it
	DocsDir      string // serve this directory of static files as docs.test ("": none)
	Shop         bool   // serve shop.test (product pages in three layouts with JSON-LD and OpenGraph), linked from nowhere: seed shop.test
	Requisites   bool   // serve style.test and cdn.test (pages that need stylesheets, images, a font and a CDN's script), linked from nowhere: seed style.test
	ProductToken string // the crawler's robots.txt product token, lower case

	DefaultDelay time.Duration // required gap between request starts where robots.txt sets none
	Tolerance    time.Duration // slack on gaps and Retry-After for scheduling jitter
	MaxInFlight  int           // allowed concurrent requests per host

	SlowRobots   time.Duration // how long the slow robots.txt profile takes to answer
	PageLatency  time.Duration // generic pages answer after this long (0: at once)
	RetryAfter   time.Duration // how long retry.test asks crawlers to wait
	ChangePeriod time.Duration // how often etag.test's changing pages change

	RingSize       int // recent requests kept for Requests()
	MaxTrackedURLs int // distinct URLs tracked for repeat detection; past it, counted untracked
}

// DefaultConfig is a small web with every special host.
func DefaultConfig() Config {
	return Config{
		Hosts: 50, Pages: 20, Seed: 1, Specials: true, ProductToken: "trawlerbot",
		DefaultDelay: time.Second, Tolerance: 20 * time.Millisecond, MaxInFlight: 1,
		SlowRobots: 3 * time.Second, RetryAfter: 5 * time.Second, ChangePeriod: time.Minute,
		RingSize: 100_000, MaxTrackedURLs: 4_000_000,
	}
}
