package activities

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/trawlerdev/trawler/internal/blob"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/fetch"
	"github.com/trawlerdev/trawler/internal/netguard"
	"github.com/trawlerdev/trawler/internal/robots"
	"github.com/trawlerdev/trawler/internal/store"
)

// MaxRedirects is how many redirect hops lead to a URL at most.
const MaxRedirects = 5

// Fetcher runs on the fetch task queue: it fetches a batch of one host's URLs, spacing request
// starts by the host's delay, and stores bodies in MinIO and outcomes in Postgres.
type Fetcher struct {
	Store    *store.Store
	Blob     *blob.Store
	Client   *fetch.Client
	Crawls   *Crawls
	Admitter *Admitter
}

// FetchBatchInput is a host's claimed URLs and its pacing.
type FetchBatchInput struct {
	Host          string          `json:"host"`
	URLs          []store.Claimed `json:"urls"`
	Delay         time.Duration   `json:"delay"`         // between request starts, before robots.txt's Crawl-delay
	MaxCrawlDelay time.Duration   `json:"maxCrawlDelay"` // cap on Crawl-delay
	NotBefore     time.Time       `json:"notBefore"`     // no request starts earlier
}

// FetchBatchResult is small: counts, pacing facts and page references, never bodies. It is
// also the heartbeat detail, so a retried activity resumes after the last URL it finished.
type FetchBatchResult struct {
	Done              int             `json:"done"` // URLs finished, in input order
	Fetched           int             `json:"fetched"`
	NotModified       int             `json:"notModified"`
	Errors            int             `json:"errors"`
	Skipped           int             `json:"skipped"`
	Deferred          int             `json:"deferred"`
	Requests          int             `json:"requests"`
	LastRequestAt     time.Time       `json:"lastRequestAt"`
	CrawlDelay        time.Duration   `json:"crawlDelay"` // from robots.txt, capped
	CrawlDelayCapped  bool            `json:"crawlDelayCapped"`
	DeferUntil        time.Time       `json:"deferUntil"` // the host asked us to wait (Retry-After)
	ConsecutiveErrors int             `json:"consecutiveErrors"`
	LastError         string          `json:"lastError,omitempty"`
	Pages             []crawl.PageRef `json:"pages,omitempty"`
}

// FetchBatch fetches in.URLs in order. robots.txt comes first when its cache has expired
// (itself a request under the same spacing). A URL robots.txt forbids is skipped without a
// request. After a Retry-After the rest of the batch goes back to the queue for later.
func (f *Fetcher) FetchBatch(ctx context.Context, in FetchBatchInput) (FetchBatchResult, error) {
	var res FetchBatchResult
	if activity.HasHeartbeatDetails(ctx) {
		_ = activity.GetHeartbeatDetails(ctx, &res)
	}
	if activity.GetInfo(ctx).Attempt > 1 {
		// A previous attempt may have sent a request after its last delivered heartbeat:
		// start a full delay from now, which is after all of them.
		in.NotBefore = later(in.NotBefore, time.Now().Add(max(in.Delay, res.CrawlDelay)))
	}
	log := activity.GetLogger(ctx)
	rulesByToken := map[string]*robots.Rules{}
	var cached *store.Robots
	for res.Done < len(in.URLs) {
		u := in.URLs[res.Done]
		ci, err := f.Crawls.get(ctx, u.CrawlID)
		if err != nil {
			return res, err
		}
		if !res.DeferUntil.IsZero() && time.Now().Before(res.DeferUntil) {
			if err := f.record(ctx, in.Host, store.FetchOutcome{CrawlID: u.CrawlID, Hash: u.Hash, URL: u.URL,
				State: store.StateQueued, Attempts: u.Attempts, NextFetchAt: res.DeferUntil}); err != nil {
				return res, err
			}
			res.Deferred++
			res.Done++
			continue
		}
		rules := rulesByToken[ci.token]
		if rules == nil {
			if cached == nil || time.Now().After(cached.ExpiresAt) {
				if cached, err = f.robots(ctx, in, &res, u.URL, ci); err != nil {
					return res, err
				}
			}
			rules = robots.FromStatus(cached.Status, []byte(cached.Body), ci.token)
			rulesByToken[ci.token] = rules
			if d := rules.CrawlDelay; d > 0 {
				res.CrawlDelay, res.CrawlDelayCapped = min(d, in.MaxCrawlDelay), d > in.MaxCrawlDelay
			}
		}
		pu, err := url.Parse(u.URL)
		if err != nil {
			return res, errorf("claimed URL %q: %w", u.URL, err)
		}
		if !rules.Allowed(pu.RequestURI()) {
			o := store.FetchOutcome{CrawlID: u.CrawlID, Hash: u.Hash, URL: u.URL, State: store.StateSkipped, SkipReason: "robots.txt", Attempts: u.Attempts}
			if rules.DisallowAll() { // unreachable robots.txt: wait for it, up to maxAttempts
				o.Attempts++
				o.Err = rules.Reason
				if o.Attempts < ci.spec.MaxAttempts {
					o.State, o.SkipReason, o.NextFetchAt = store.StateQueued, "", time.Now().Add(backoff(ci.spec.RetryBase.D(), o.Attempts))
					res.Deferred++
				} else {
					o.SkipReason = "robots.txt unreachable"
				}
			}
			if o.State == store.StateSkipped {
				res.Skipped++
			}
			if err := f.record(ctx, in.Host, o); err != nil {
				return res, err
			}
			res.Done++
			activity.RecordHeartbeat(ctx, res)
			continue
		}
		if err := f.waitTurn(ctx, in, &res); err != nil {
			return res, err
		}
		o, page, err := f.fetchOne(ctx, ci, u, &res)
		if err != nil {
			return res, err
		}
		if err := f.record(ctx, in.Host, o); err != nil {
			return res, err
		}
		if page != nil {
			res.Pages = append(res.Pages, *page)
		}
		if o.Err != "" {
			log.Debug("fetch failed", "url", u.URL, "error", o.Err, "state", o.State)
		}
		res.Done++
		activity.RecordHeartbeat(ctx, res)
	}
	return res, nil
}

// robots fetches and caches the host's robots.txt.
func (f *Fetcher) robots(ctx context.Context, in FetchBatchInput, res *FetchBatchResult, pageURL string, ci *crawlInfo) (*store.Robots, error) {
	cached, err := f.Store.HostRobots(ctx, in.Host)
	if err != nil {
		return nil, err
	}
	if cached != nil && time.Now().Before(cached.ExpiresAt) {
		return cached, nil
	}
	if err := f.waitTurn(ctx, in, res); err != nil {
		return nil, err
	}

	pu, _ := url.Parse(pageURL)
	target := pu.Scheme + "://" + pu.Host + "/robots.txt"
	now := time.Now()
	r := &store.Robots{FetchedAt: now, ExpiresAt: now.Add(robots.TTL)}
	// Redirects are followed here, up to five (RFC 9309 §2.3.1.2), each hop spaced like any
	// request so the host never sees two of them closer than its delay.
	var resp *fetch.Response
	for hop := 0; ; hop++ {
		if hop > 0 {
			if err := f.waitTurn(ctx, in, res); err != nil {
				return nil, err
			}
		}
		res.LastRequestAt, res.Requests = time.Now(), res.Requests+1
		resp, err = f.Client.Get(ctx, fetch.Request{URL: target, UserAgent: ci.userAgent, MaxBytes: robots.MaxBytes,
			Timeout: ci.spec.RequestTimeout.D()})
		if err != nil || resp.Status < 300 || resp.Status >= 400 || resp.Location == "" || hop == 5 {
			break
		}
		target = resp.Location
	}
	switch {
	case err != nil || resp == nil:
		r.Status = 0 // unreachable (network error, refused address): complete disallow for now
	case resp.Status >= 300 && resp.Status < 400:
		r.Status = 0 // a redirect loop or chain past five hops counts as unreachable
	default:
		r.Status, r.Body = resp.Status, string(resp.Body)
	}
	if err != nil && ctx.Err() != nil {
		return nil, ctx.Err()
	}
	rules := robots.FromStatus(r.Status, []byte(r.Body), ci.token)
	if rules.DisallowAll() {
		r.ExpiresAt = now.Add(min(robots.UnreachableTTL, backoff(ci.spec.RetryBase.D(), 1)))
	}
	r.Sitemaps = rules.Sitemaps
	if err := f.Store.SaveRobots(ctx, in.Host, *r, rules.CrawlDelay); err != nil {
		return nil, err
	}
	activity.RecordHeartbeat(ctx, *res)
	return r, nil
}

// waitTurn sleeps until the next request to the host may start, heartbeating meanwhile.
func (f *Fetcher) waitTurn(ctx context.Context, in FetchBatchInput, res *FetchBatchResult) error {
	delay := max(in.Delay, res.CrawlDelay)
	next := in.NotBefore
	if !res.LastRequestAt.IsZero() && res.LastRequestAt.Add(delay).After(next) {
		next = res.LastRequestAt.Add(delay)
	}
	for {
		wait := time.Until(next)
		if wait <= 0 {
			return nil
		}
		t := time.NewTimer(min(wait, 5*time.Second))
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
			activity.RecordHeartbeat(ctx, *res)
		}
	}
}

// fetchOne requests one URL and decides what becomes of it.
// An error means our side failed (MinIO); the activity is retried and resumes at this URL.
func (f *Fetcher) fetchOne(ctx context.Context, ci *crawlInfo, u store.Claimed, res *FetchBatchResult) (store.FetchOutcome, *crawl.PageRef, error) {
	spec := ci.spec
	o := store.FetchOutcome{CrawlID: u.CrawlID, Hash: u.Hash, URL: u.URL, Attempts: u.Attempts,
		FetchKey: fmt.Sprintf("%s/%x/%d/%d", u.CrawlID, u.Hash, u.FetchCount, u.Attempts)}
	start := time.Now()
	res.LastRequestAt, res.Requests = start, res.Requests+1
	resp, err := f.Client.Get(ctx, fetch.Request{URL: u.URL, UserAgent: ci.userAgent, ETag: u.ETag, LastModified: u.LastModified,
		MaxBytes: spec.MaxBodyBytes, Timeout: spec.RequestTimeout.D()})
	o.FetchedAt, o.Duration = start, time.Since(start)
	recrawlAt := time.Time{}
	if spec.Recrawl.Interval > 0 {
		recrawlAt = start.Add(spec.Recrawl.Interval.D())
	}
	done := func() {
		o.State = store.StateDone
		if !recrawlAt.IsZero() {
			o.State, o.NextFetchAt = store.StateQueued, recrawlAt
		}
	}
	retry := func(why string, deferUntil time.Time) {
		o.Err = why
		o.Attempts++
		res.Errors++
		res.ConsecutiveErrors++
		res.LastError = why
		if o.Attempts >= spec.MaxAttempts {
			o.State = store.StateDead
			return
		}
		o.State, o.NextFetchAt = store.StateQueued, start.Add(backoff(spec.RetryBase.D(), o.Attempts))
		if deferUntil.After(o.NextFetchAt) {
			o.NextFetchAt = deferUntil
		}
	}
	if err != nil {
		if errors.Is(err, netguard.ErrBlocked) {
			o.FetchKey, o.State, o.SkipReason, o.Err = "", store.StateSkipped, "blocked address", err.Error()
			res.Skipped++
			return o, nil, nil
		}
		if ctx.Err() != nil {
			return o, nil, ctx.Err() // we are stopping; not the site's failure
		}
		retry(err.Error(), time.Time{})
		return o, nil, nil
	}
	o.Status, o.ContentType, o.FinalURL, o.Truncated = resp.Status, resp.ContentType, resp.FinalURL, resp.Truncated
	o.Bytes, o.ETag, o.LastModified = int64(len(resp.Body)), resp.ETag, resp.LastModified
	switch s := resp.Status; {
	case s >= 200 && s < 300:
		res.ConsecutiveErrors = 0
		key, _, err := f.Blob.PutBody(ctx, resp.Body)
		if err != nil {
			return o, nil, err
		}
		h := blob.ContentHash(resp.Body)
		o.BodyKey, o.ContentHash = key, h[:]
		res.Fetched++
		if fetch.IsHTML(resp.ContentType) {
			o.State = store.StateFetched
			return o, &crawl.PageRef{CrawlID: u.CrawlID, Hash: u.Hash, URL: u.URL, FinalURL: resp.FinalURL, BodyKey: key,
				ContentType: resp.ContentType, ContentHash: h[:], Depth: u.Depth, Size: o.Bytes}, nil
		}
		done()
	case s == 304:
		res.ConsecutiveErrors = 0
		res.NotModified++
		done()
	case s >= 300 && s < 400:
		res.ConsecutiveErrors = 0
		o.State = store.StateDone // a redirect's own URL is not recrawled; its target is
		o.Note = f.followRedirect(ctx, ci, u, resp.Location)
	case s == 429 || s == 503:
		wait := resp.RetryAfter
		if wait > time.Hour {
			wait = time.Hour
		}
		var until time.Time
		if wait > 0 {
			until = time.Now().Add(wait)
			if until.After(res.DeferUntil) {
				res.DeferUntil = until
			}
		}
		retry(fmt.Sprintf("HTTP %d", s), until)
	case s == 408 || s >= 500:
		retry(fmt.Sprintf("HTTP %d", s), time.Time{})
	default: // other 4xx: a final answer, recorded
		res.ConsecutiveErrors = 0
		done()
	}
	return o, nil, nil
}

// followRedirect admits the redirect target as a URL of its own host; it returns why not, if
// it was not.
func (f *Fetcher) followRedirect(ctx context.Context, ci *crawlInfo, u store.Claimed, location string) string {
	if location == "" {
		return "redirect without Location"
	}
	if u.Hops+1 > MaxRedirects {
		return fmt.Sprintf("more than %d redirects", MaxRedirects)
	}
	base, _ := url.Parse(u.URL)
	target, err := f.Crawls.Norm.Resolve(base, location)
	if err != nil {
		return "bad redirect target: " + err.Error()
	}
	c := candidate(target, u.Depth, u.Hops+1, "redirect")
	if !ci.scope.Allows(c.Host) {
		return "redirect target out of scope: " + target
	}
	if _, err := f.Admitter.admit(ctx, ci, []store.Candidate{c}); err != nil {
		return "admit redirect target: " + err.Error()
	}
	return ""
}

func (f *Fetcher) record(ctx context.Context, host string, o store.FetchOutcome) error {
	_, err := f.Store.RecordFetch(ctx, host, o)
	return err
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// backoff is the wait before retry n (1-based): base·2^(n-1), ±20% jitter, at most 6 h.
func backoff(base time.Duration, n int) time.Duration {
	d := base << min(n-1, 20)
	if d > 6*time.Hour || d <= 0 {
		d = 6 * time.Hour
	}
	return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
}
