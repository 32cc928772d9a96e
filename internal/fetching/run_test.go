package fetching

import (
	"testing"
	"time"
)

// A Crawl-delay learnt from robots.txt spaces the next request a whole new delay after
// robots.txt's answer, not only after its slot.
func TestRaisedDelayCountsFromTheLastAnswer(t *testing.T) {
	b := &leaseRun{in: LeaseInput{Delay: time.Second, Concurrency: 1}}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.respondedLocked()
	answered := b.answered
	if got := b.next.Sub(answered); got != time.Second {
		t.Fatalf("after an answer with a 1 s delay, next is %s after it; want 1s", got)
	}
	b.res.CrawlDelay = 2 * time.Second
	b.delayRaisedLocked()
	if got := b.next.Sub(answered); got != 2*time.Second {
		t.Fatalf("after Crawl-delay 2 s, next is %s after the last answer; want 2s", got)
	}
	// A batch with no answer yet keeps its schedule.
	fresh := &leaseRun{in: LeaseInput{Delay: time.Second}}
	fresh.res.CrawlDelay = 2 * time.Second
	fresh.delayRaisedLocked()
	if !fresh.next.IsZero() {
		t.Fatalf("a batch with no answer moved its next request to %s", fresh.next)
	}
}
