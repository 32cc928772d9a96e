package fetching

import (
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/store"
)

// Each status means one thing for its URL: 429 and 503 slow down, 408 and 5xx fail, 404 and
// 410 count towards gone, 304 keeps the document, other 3xx redirect, other 4xx are final.
func TestClassifyStatuses(t *testing.T) {
	for status, want := range map[int]answer{200: answerPage, 204: answerPage, 299: answerPage, 304: answerNotModified,
		301: answerRedirect, 308: answerRedirect, 429: answerSlowDown, 503: answerSlowDown, 408: answerFailed,
		500: answerFailed, 502: answerFailed, 599: answerFailed, 404: answerGone, 410: answerGone,
		400: answerFinal, 403: answerFinal, 451: answerFinal, 100: answerFinal} {
		if got := classify(status); got != want {
			t.Errorf("classify(%d) = %d, want %d", status, got, want)
		}
	}
}

// A failed URL is retried after a doubling backoff (±20% jitter), never before a Retry-After,
// and is dead at the crawl's last attempt.
func TestRetryAfterFailure(t *testing.T) {
	spec := crawl.Spec{MaxAttempts: 4, RetryBase: crawl.Duration(30 * time.Second)}
	start := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	for attempts, wait := range map[int]time.Duration{1: 30 * time.Second, 2: time.Minute, 3: 2 * time.Minute} {
		for range 20 {
			state, next := retryAfterFailure(spec, attempts, start, time.Time{})
			if d := next.Sub(start); state != store.StateQueued || d < wait*8/10 || d > wait*12/10 {
				t.Fatalf("after failure %d: %s at +%v, want queued at +%v ±20%%", attempts, state, d, wait)
			}
		}
	}
	later := start.Add(time.Hour)
	if _, next := retryAfterFailure(spec, 1, start, later); !next.Equal(later) {
		t.Errorf("a Retry-After an hour away: next at %v", next)
	}
	if state, _ := retryAfterFailure(spec, 4, start, time.Time{}); state != store.StateDead {
		t.Errorf("the fourth failure of four: %s, want dead", state)
	}
}

// A redirect is followed for at most MaxRedirects (5) hops: the sixth is refused with the
// reason, before any admission; a redirect without a Location is refused too.
func TestRedirectHopsAreCapped(t *testing.T) {
	f := &Stage{} // no store or admission: a refused redirect needs neither
	if got := f.followRedirect(t.Context(), nil, crawl.Claimed{URL: "http://a.test/5", Hops: MaxRedirects}, "/6"); got != "more than 5 redirects" {
		t.Errorf("the sixth hop: %q", got)
	}
	if got := f.followRedirect(t.Context(), nil, crawl.Claimed{URL: "http://a.test/"}, ""); got != "redirect without Location" {
		t.Errorf("no Location: %q", got)
	}
}
