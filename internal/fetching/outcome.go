package fetching

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strings"
	"time"

	"github.com/trawlerdev/trawler/internal/admit"
	"github.com/trawlerdev/trawler/internal/blob"
	"github.com/trawlerdev/trawler/internal/clock"
	"github.com/trawlerdev/trawler/internal/content"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/failpoint"
	"github.com/trawlerdev/trawler/internal/fetch"
	"github.com/trawlerdev/trawler/internal/metrics"
	"github.com/trawlerdev/trawler/internal/netguard"
	"github.com/trawlerdev/trawler/internal/policy"
	"github.com/trawlerdev/trawler/internal/robots"
	"github.com/trawlerdev/trawler/internal/store"
	"github.com/trawlerdev/trawler/internal/urlnorm"
)

// answer is what a response's status means for its URL.
type answer int

const (
	answerPage        answer = iota // 2xx: a body to store (and, if HTML and new, to process)
	answerNotModified               // 304: the stored document stands
	answerRedirect                  // 3xx: done here; its target is admitted
	answerSlowDown                  // 429, 503: retried, no sooner than a Retry-After
	answerFailed                    // 408, other 5xx: retried with backoff
	answerGone                      // 404, 410: recrawled until it has been gone often enough
	answerFinal                     // other 4xx (and anything else): a final answer, recrawled as unchanged
)

// classify says what a response's status means.
func classify(status int) answer {
	switch {
	case status >= 200 && status < 300:
		return answerPage
	case status == 304:
		return answerNotModified
	case status >= 300 && status < 400:
		return answerRedirect
	case status == 429 || status == 503:
		return answerSlowDown
	case status == 408 || status >= 500:
		return answerFailed
	case status == 404 || status == 410:
		return answerGone
	}
	return answerFinal
}

// retryAfterFailure is a failed URL's next state after its attempts-th failure at start: dead
// at the spec's MaxAttempts, else queued after the backoff, and no sooner than deferUntil.
func retryAfterFailure(spec crawl.Spec, attempts int, start, deferUntil time.Time) (crawl.URLState, time.Time) {
	if attempts >= spec.MaxAttempts {
		return crawl.URLDead, time.Time{}
	}
	return crawl.URLQueued, clock.Later(start.Add(backoff(spec.RetryBase.D(), attempts)), deferUntil)
}

// fetchOne requests one URL (its slot started at start) and decides what becomes of it. An
// error means our side failed (MinIO): the activity is retried and resumes at this URL.
func (f *Stage) fetchOne(ctx context.Context, ci *policy.Crawl, u crawl.Claimed, start time.Time, sent func(time.Time), jar *cookieJar) (store.FetchOutcome, effect, error) {
	spec := ci.Spec
	var eff effect
	o := store.FetchOutcome{CrawlID: u.CrawlID, Hash: u.Hash, URL: u.URL, Attempts: u.Attempts,
		FetchKey: crawl.FetchKey(u.CrawlID, u.Hash, u.FetchCount, u.Attempts)}
	resp, err := f.Client.Get(ctx, fetch.Request{URL: u.URL, UserAgent: ci.UserAgent, Header: ci.HeaderFor(urlnorm.Authority(u.URL)), Proxy: ci.Proxy, Cookies: jar.send(u.URL), ETag: u.ETag, LastModified: u.LastModified,
		MaxBytes: spec.MaxBodyBytes, Timeout: spec.RequestTimeout.D(), Sent: sent, RecordSecrets: spec.RecordSecretHeaders})
	defer resp.Release() // the body is stored (copied into a segment) or dropped by then
	o.FetchedAt, o.Duration = start, f.clock().Since(start)
	// schedule finishes the URL, or queues its recrawl after an interval adapted to what this
	// fetch found (crawl.Recrawl).
	schedule := func(change crawl.Change) {
		o.State = crawl.URLDone
		if next := spec.Recrawl.Next(seconds(u.RecrawlS), change, seconds(u.HintS)); next > 0 {
			o.State, o.NextFetchAt, o.RecrawlS = crawl.URLQueued, start.Add(next), int(next/time.Second)
		}
	}
	retry := func(why string, deferUntil time.Time) {
		o.Err = why
		o.Attempts++
		eff.errors, eff.failed, eff.lastError = 1, true, why
		o.State, o.NextFetchAt = retryAfterFailure(spec, o.Attempts, start, deferUntil)
	}
	if err != nil {
		if errors.Is(err, netguard.ErrBlocked) {
			o.FetchKey, o.State, o.SkipReason, o.Err = "", crawl.URLSkipped, "blocked address", err.Error()
			eff.skipped = 1
			return o, eff, nil
		}
		if ctx.Err() != nil {
			return o, eff, ctx.Err() // we are stopping; not the site's failure
		}
		if isNoSuchHost(err) {
			eff.gone = "dns"
		}
		if errors.Is(err, fetch.ErrTimeout) {
			eff.latency = spec.RequestTimeout.D() // no answer in time: as slow as a server may be
		}
		retry(err.Error(), time.Time{})
		return o, eff, nil
	}
	// Saved before the outcome is recorded: the next page's request, on whichever worker,
	// finds the cookie (a failure here is ours: the lease is retried).
	if err := jar.record(ctx, u.URL, resp.Header.Values("Set-Cookie"), time.Now(), func(ctx context.Context, keep []store.SetCookie) error {
		return f.Hosts.SaveCookies(ctx, jar.crawlID, jar.host, keep)
	}); err != nil {
		return o, eff, err
	}
	o.Status, o.ContentType, o.FinalURL, o.Truncated = resp.Status, resp.ContentType, resp.FinalURL, resp.Truncated
	eff.latency = o.Duration
	o.Bytes, o.ETag, o.LastModified = int64(len(resp.Body)), resp.ETag, resp.LastModified
	o.RequestHead, o.ResponseHead = resp.RequestHead, resp.ResponseHead
	switch s := resp.Status; classify(s) {
	case answerPage:
		h := blob.ContentHash(resp.Body)
		change := crawl.FirstFetch
		if len(u.ContentHash) > 0 {
			changed := !bytes.Equal(u.ContentHash, h[:])
			o.Changed, change = &changed, crawl.Unchanged
			if changed {
				change = crawl.Changed
			}
		}
		// X-Robots-Tag speaks for every content type; what applies to us is kept with the fetch.
		o.RobotsTag = robots.ParseTag(resp.Header.Values("X-Robots-Tag"), ci.Token).String()
		key, stored, err := f.keepBody(ctx, ci, u, h, change, resp.Body)
		if err != nil {
			return o, eff, err
		}
		eff.stored = stored
		o.BodyKey, o.ContentHash = key, h[:]
		eff.fetched, eff.succeeded = 1, true
		if u.Source == crawl.SourceSitemapFile {
			if o.Note, err = f.readSitemap(ctx, ci, u, resp.Body); err != nil {
				return o, eff, err // its entries must be admitted before it is recorded done
			}
			schedule(change)
			return o, eff, nil
		}
		if u.Source == crawl.SourceEmbed {
			// A page's requisite: stored (the capture), never read for links; a stylesheet
			// is read for its own requisites.
			if isStylesheet(resp.ContentType, u.URL) && change != crawl.Unchanged {
				if o.Note, err = f.readStylesheet(ctx, ci, u, resp.Body); err != nil {
					return o, eff, err
				}
			}
			schedule(change)
			return o, eff, nil
		}
		kind := content.Sniff(resp.ContentType, resp.Body)
		if !kind.Read() {
			// Stored (the capture) and not read: counted by its type.
			o.Note = "not read: " + content.MediaType(resp.ContentType, resp.Body)
			f.Hooks.Count.Add(metrics.NotRead, 1, "type", typeFamily(resp.ContentType, resp.Body))
		}
		if kind.Read() && change != crawl.Unchanged {
			o.State = crawl.URLFetched // the crawl's processing claims it
			return o, eff, nil
		}
		schedule(change) // not read, or the same bytes as last time: its document stands
	case answerNotModified:
		eff.notModified, eff.succeeded = 1, true
		unchanged := false
		o.Changed = &unchanged
		schedule(crawl.Unchanged)
	case answerRedirect:
		eff.succeeded = true
		o.State = crawl.URLDone // a redirect's own URL is not recrawled; its target is
		if o.Note, err = f.followRedirect(ctx, ci, u, resp.Location); err != nil {
			return o, eff, err
		}
	case answerSlowDown:
		var until time.Time
		if wait := min(resp.RetryAfter, time.Hour); wait > 0 {
			until = f.clock().Now().Add(wait)
			eff.deferUntil = until
			// Held in the host's row too, so its renders (which book the host's schedule, not
			// this lease's) wait as well. The lease defers by itself either way.
			if err := f.Schedule.Defer(ctx, urlnorm.Authority(u.URL), until); err != nil {
				f.Hooks.log().Warn("defer host", "url", u.URL, "error", err)
			}
		}
		retry(fmt.Sprintf("HTTP %d", s), until)
	case answerFailed:
		retry(fmt.Sprintf("HTTP %d", s), time.Time{})
	case answerFinal:
		eff.succeeded = true
		schedule(crawl.Unchanged)
	case answerGone:
		eff.succeeded = true
		if strings.HasSuffix(strings.SplitN(u.URL, "?", 2)[0], "://"+urlnorm.Authority(u.URL)+"/") {
			eff.gone = "front page gone"
		}
		o.GoneCount = u.GoneCount + 1
		if o.GoneCount >= spec.Recrawl.GoneAfter { // gone for good: no more recrawls
			o.State = crawl.URLDone
			break
		}
		schedule(crawl.Unchanged)
	}
	return o, eff, nil
}

// followRedirect admits the redirect target as a URL of its own host; it returns why not, if
// it was not. An admission that fails is an error of ours: the redirect's outcome must not be
// recorded without its target (nothing would ever admit it again), so the lease fails with
// the URL still claimed and its retry fetches it again — unless Postgres refused the values
// themselves, which no retry mends: that is noted on the outcome.
func (f *Stage) followRedirect(ctx context.Context, ci *policy.Crawl, u crawl.Claimed, location string) (string, error) {
	if location == "" {
		return "redirect without Location", nil
	}
	if u.Hops+1 > MaxRedirects {
		return fmt.Sprintf("more than %d redirects", MaxRedirects), nil
	}
	base, _ := url.Parse(u.URL)
	source := crawl.SourceRedirect
	if u.Source == crawl.SourceSitemapFile || u.Source == crawl.SourceEmbed {
		source = u.Source // a sitemap (or a page's requisite) behind a redirect (http -> https) is still one
	}
	found := admit.Discover(f.Crawls, ci, base, admit.From{Depth: u.Depth, Hops: u.Hops + 1, Source: source}, 0)
	c, why := found.Add(admit.Found{Href: location})
	if _, err := f.Admit(ctx, ci, found); err != nil {
		if store.IsDataError(err) { // the values refused: a retry would fail the same way for ever
			return "admit redirect target: " + err.Error(), nil
		}
		return "", fmt.Errorf("admit redirect target of %s: %w", u.URL, err)
	}
	failpoint.Hit(failpoint.RedirectAdmitted)
	switch {
	case c.Key == "":
		return "bad redirect target (" + why + "): " + location, nil
	case why != "":
		return "redirect target refused (" + why + "): " + c.URL, nil
	}
	return "", nil
}

// record stores an outcome. One that Postgres refuses for its values (what the web sent
// could not be made storable) is recorded as this URL's skip with the reason, so it costs
// that URL, never its lease, host or crawl.
func (f *Stage) record(ctx context.Context, host string, o store.FetchOutcome) error {
	_, err := f.Fetches.RecordFetchGrouped(ctx, host, o)
	if err == nil || !store.IsDataError(err) {
		return err
	}
	f.Hooks.log().Warn("outcome not storable: skipping the URL", "crawl", o.CrawlID, "url", o.URL, "error", err)
	f.Hooks.Count.Add(metrics.Unstorable, 1)
	bare := store.FetchOutcome{CrawlID: o.CrawlID, Hash: o.Hash, URL: o.URL, FetchKey: o.FetchKey, FetchedAt: o.FetchedAt,
		Status: o.Status, Duration: o.Duration, Attempts: o.Attempts, State: crawl.URLSkipped, SkipReason: "unstorable response",
		Err: err.Error()}
	_, err = f.Fetches.RecordFetch(ctx, host, bare)
	return err
}

func seconds(s int) time.Duration { return time.Duration(s) * time.Second }

// backoff is the wait before retry n (1-based): base·2^(n-1), ±20% jitter, at most 6 h.
func backoff(base time.Duration, n int) time.Duration {
	d := base << min(n-1, 20)
	if d > 6*time.Hour || d <= 0 {
		d = 6 * time.Hour
	}
	return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
}

// typeFamily is a body's top-level media type, a metric tag of few values.
func typeFamily(contentType string, body []byte) string {
	family, _, _ := strings.Cut(content.MediaType(contentType, body), "/")
	switch family {
	case "image", "audio", "video", "font", "application", "text":
		return family
	}
	return "other"
}
