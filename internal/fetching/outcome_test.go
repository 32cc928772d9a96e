package fetching

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/admit"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/policy"
	"github.com/trawlerdev/trawler/internal/urlnorm"
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
			if d := next.Sub(start); state != crawl.URLQueued || d < wait*8/10 || d > wait*12/10 {
				t.Fatalf("after failure %d: %s at +%v, want queued at +%v ±20%%", attempts, state, d, wait)
			}
		}
	}
	later := start.Add(time.Hour)
	if _, next := retryAfterFailure(spec, 1, start, later); !next.Equal(later) {
		t.Errorf("a Retry-After an hour away: next at %v", next)
	}
	if state, _ := retryAfterFailure(spec, 4, start, time.Time{}); state != crawl.URLDead {
		t.Errorf("the fourth failure of four: %s, want dead", state)
	}
}

// A redirect is followed for at most MaxRedirects (5) hops: the sixth is refused with the
// reason, before any admission; a redirect without a Location is refused too.
func TestRedirectHopsAreCapped(t *testing.T) {
	f := &Stage{} // no store or admission: a refused redirect needs neither
	if got, err := f.followRedirect(t.Context(), nil, crawl.Claimed{URL: "http://a.test/5", Hops: MaxRedirects}, "/6"); got != "more than 5 redirects" || err != nil {
		t.Errorf("the sixth hop: %q %v", got, err)
	}
	if got, err := f.followRedirect(t.Context(), nil, crawl.Claimed{URL: "http://a.test/"}, ""); got != "redirect without Location" || err != nil {
		t.Errorf("no Location: %q %v", got, err)
	}
}

// A redirect whose target cannot be admitted (Postgres failing over, the lease cancelled) is an
// error of the lease, never a note on an outcome recorded done: a redirect recorded without its
// target admitted lost the chain behind it for good (a cluster chaos run lost redirect.test's
// /five/0 so). The same for a sitemap's entries.
func TestAFailedAdmissionFailsTheRedirectAndTheSitemap(t *testing.T) {
	down := errors.New("the database is failing over")
	f := &Stage{Crawls: &policy.Crawls{Norm: urlnorm.New(urlnorm.Default())},
		Admit: func(context.Context, *policy.Crawl, *admit.Discovery) (admit.AdmitStats, error) {
			return admit.AdmitStats{}, down
		}}
	ci := f.Crawls.Put("c", crawl.Spec{Scope: crawl.ScopeAny}.WithDefaults())
	if note, err := f.followRedirect(t.Context(), ci, crawl.Claimed{URL: "http://a.test/five/0"}, "/five/1"); !errors.Is(err, down) {
		t.Errorf("redirect: note %q, error %v; want the admission's error", note, err)
	}
	sitemap := []byte(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>http://a.test/p</loc></url></urlset>`)
	if note, err := f.readSitemap(t.Context(), ci, crawl.Claimed{URL: "http://a.test/sitemap.xml"}, sitemap); !errors.Is(err, down) {
		t.Errorf("sitemap: note %q, error %v; want the admission's error", note, err)
	}
}
