package pacing

import (
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
)

// Pace is how a host's requests are spaced: the gap between request starts, and how many may
// be in flight (0: no limit of its own).
type Pace struct {
	Delay       time.Duration
	Concurrency int
}

// Slowest is the one pacing rule, wherever a host's requests are paced (the host workflow,
// a fetch lease, a rendered page's subresources): of every pace that applies — the crawl's,
// its throttle, robots.txt's Crawl-delay, the host's throttle — the largest delay and the
// smallest concurrency hold.
func Slowest(paces ...Pace) Pace {
	var out Pace
	for _, p := range paces {
		out.Delay = max(out.Delay, p.Delay)
		if p.Concurrency > 0 && (out.Concurrency == 0 || p.Concurrency < out.Concurrency) {
			out.Concurrency = p.Concurrency
		}
	}
	return out
}

// CrawlDelayPace is robots.txt's Crawl-delay as a pace, as the site asked: never faster. A
// crawl whose maxCrawlDelay is below it skips the host's URLs (CrawlDelayOver) instead of
// fetching them faster than asked.
func CrawlDelayPace(crawlDelay time.Duration) Pace {
	return Pace{Delay: crawlDelay}
}

// CrawlDelayOver says whether robots.txt asks for more time between requests than a crawl
// waits (its maxCrawlDelay; 0: no cap).
func CrawlDelayOver(crawlDelay, maxCrawlDelay time.Duration) bool {
	return maxCrawlDelay > 0 && crawlDelay > maxCrawlDelay
}

// GapMargin is added to a host's delay when its next slot is booked: connection set-up and
// scheduling on either side can bring two requests closer at the server than they left here,
// and the delay is a floor the server must see. A fifth of the delay, at most 50 ms.
func GapMargin(delay time.Duration) time.Duration { return min(delay/5, 50*time.Millisecond) }

// InLeaseWait is the longest wait for a host's next request (its next slot, or its next due
// URL) that a fetch lease takes in itself: the host workflow starts a lease when the wait is
// shorter (a durable timer per lease would cost two events and a workflow task for a
// second's crawl-delay), and a lease ends when it is longer, its host's workflow then
// waiting on a durable timer (a large Crawl-delay, a backoff, the next due URL).
const InLeaseWait = 5 * time.Second

// Gap is what a booking spaces a request from the next by: the delay and its margin.
func Gap(delay time.Duration) time.Duration { return delay + GapMargin(delay) }

// OfCrawl is the crawl's pacing of each host: its delay and concurrency, slowed by its
// throttle.
func OfCrawl(s crawl.Spec) Pace {
	p := Pace{Delay: s.Delay.D(), Concurrency: s.Concurrency}
	if t := s.Throttle; t != nil {
		p = Slowest(p, Pace{Delay: t.Delay.D(), Concurrency: t.Concurrency})
	}
	return p
}
