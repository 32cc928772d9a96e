package activities

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/trawlerdev/trawler/internal/blob"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/failpoint"
	"github.com/trawlerdev/trawler/internal/fetch"
	"github.com/trawlerdev/trawler/internal/metrics"
	"github.com/trawlerdev/trawler/internal/netguard"
	"github.com/trawlerdev/trawler/internal/robots"
	"github.com/trawlerdev/trawler/internal/sitemap"
	"github.com/trawlerdev/trawler/internal/store"
	"github.com/trawlerdev/trawler/internal/urlnorm"
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
	// Per-IP politeness: request starts to one address at least IPGap apart across all its
	// hosts, booked in Postgres so every worker counts them (0: off). Connect-to targets are
	// included only with IPGapOverride.
	Dialer        *netguard.Dialer
	IPGap         time.Duration
	IPGapOverride bool
}

// FetchBatchInput is a host's claimed URLs and its pacing.
type FetchBatchInput struct {
	Host          string          `json:"host"`
	URLs          []store.Claimed `json:"urls"`
	Delay         time.Duration   `json:"delay"`         // between request starts, before robots.txt's Crawl-delay
	MaxCrawlDelay time.Duration   `json:"maxCrawlDelay"` // cap on Crawl-delay
	NotBefore     time.Time       `json:"notBefore"`     // no request starts earlier
	Concurrency   int             `json:"concurrency"`   // requests in flight at most (default 1)
	// TopUp: when the URLs are done within Window, claim more of the host's due URLs, under
	// Lease, until the batch has carried TopUp (0: never).
	TopUp  int           `json:"topUp,omitempty"`
	Window time.Duration `json:"window,omitempty"`
	Lease  time.Duration `json:"lease,omitempty"`
	// Owner is the claim owner of URLs (the host workflow's batch); top-ups are claimed as
	// TopUpOwner(Owner), so whoever outlives the batch finds what it holds by owner.
	Owner string `json:"owner,omitempty"`
}

// TopUpOwner is the claim owner of the URLs a batch claims itself.
func TopUpOwner(batchOwner string) string { return batchOwner + "/top-up" }

// FetchBatchResult is small: counts, pacing facts and page references, never bodies. It is
// also the heartbeat detail, so a retried activity resumes with the URLs it finished.
type FetchBatchResult struct {
	Finished          []bool          `json:"finished"`        // by index in the input's URLs, then TopUp's
	TopUp             []store.Claimed `json:"topUp,omitempty"` // URLs the batch claimed itself
	Done              int             `json:"done"`
	Fetched           int             `json:"fetched"`
	NotModified       int             `json:"notModified"`
	Errors            int             `json:"errors"`
	Skipped           int             `json:"skipped"`
	Deferred          int             `json:"deferred"`
	Requests          int             `json:"requests"`
	LateSlots         int             `json:"lateSlots,omitempty"`      // slots given up because this process woke too late
	LateDepartures    int             `json:"lateDepartures,omitempty"` // requests that left late: the next slot moved out
	PeakInFlight      int             `json:"peakInFlight"`
	LastRequestAt     time.Time       `json:"lastRequestAt"`
	CrawlDelay        time.Duration   `json:"crawlDelay"` // from robots.txt, capped
	CrawlDelayCapped  bool            `json:"crawlDelayCapped"`
	DeferUntil        time.Time       `json:"deferUntil"` // the host asked us to wait (Retry-After)
	ConsecutiveErrors int             `json:"consecutiveErrors"`
	LastError         string          `json:"lastError,omitempty"`
	Pages             []crawl.PageRef `json:"pages,omitempty"`
	Answered          bool            `json:"answered,omitempty"` // the host answered a request sensibly
	Gone              string          `json:"gone,omitempty"`     // why the host may be dead
	Retired           bool            `json:"retired,omitempty"`  // the host was retired (dead-site cleanup)
}

// batch is one running FetchBatch: its result under a lock, and the host's request schedule.
type batch struct {
	f        *Fetcher
	in       FetchBatchInput
	mu       sync.Mutex
	res      FetchBatchResult
	inFlight int
	next     time.Time  // the earliest start of the next request
	ip       netip.Addr // the host's address, when the per-IP limit applies
	began    time.Time
}

// FetchBatch fetches in.URLs, at most in.Concurrency at a time, request starts at least the
// delay apart. robots.txt comes first when its cache has expired (itself requests under the
// same schedule). A URL robots.txt forbids is skipped without a request. After a Retry-After
// the rest of the batch goes back to the queue for later.
func (f *Fetcher) FetchBatch(ctx context.Context, in FetchBatchInput) (FetchBatchResult, error) {
	b := &batch{f: f, in: in, next: in.NotBefore, began: time.Now()}
	if activity.HasHeartbeatDetails(ctx) {
		_ = activity.GetHeartbeatDetails(ctx, &b.res)
	}
	b.in.URLs = append(append([]store.Claimed(nil), in.URLs...), b.res.TopUp...) // resumed: with what it claimed itself
	if len(b.res.Finished) != len(b.in.URLs) {
		b.res.Finished, b.res.TopUp = make([]bool, len(in.URLs)), nil
		b.in.URLs = in.URLs
	}
	if activity.GetInfo(ctx).Attempt > 1 {
		// A dead attempt may have fetched top-ups after its last heartbeat: they are in no
		// list but their owner's, and would otherwise wait for the crawl's sweep.
		if err := b.handOnOwned(ctx); err != nil {
			return FetchBatchResult{}, err
		}
	}
	defer keepAlive(ctx, func() any { return b.result() })()
	if err := b.pace(ctx, b.in.URLs); err != nil {
		return FetchBatchResult{}, err
	}
	in = b.in
	if activity.GetInfo(ctx).Attempt > 1 {
		// A previous attempt may have sent a request after its last delivered heartbeat:
		// start a full delay from now, which is after all of them.
		b.next = later(b.next, time.Now().Add(max(in.Delay, b.res.CrawlDelay)))
	} else if !b.res.LastRequestAt.IsZero() {
		b.next = later(b.next, b.res.LastRequestAt.Add(b.delay()))
	}
	if why := f.refusedHost(ctx, in.Host); why != "" {
		// Every address of the host is forbidden (loopback, private, link-local, metadata…):
		// not even robots.txt is requested.
		for i, u := range in.URLs {
			if b.res.Finished[i] {
				continue
			}
			o := store.FetchOutcome{CrawlID: u.CrawlID, Hash: u.Hash, URL: u.URL, Attempts: u.Attempts,
				State: store.StateSkipped, SkipReason: "blocked address", Err: why}
			if err := f.record(ctx, in.Host, o); err != nil {
				return b.result(), err
			}
			count(ctx, metrics.Refused, 1)
			b.mu.Lock()
			b.res.Skipped++
			b.mu.Unlock()
			b.finish(ctx, i, nil)
		}
		return b.result(), nil
	}
	b.ip = f.limitedIP(ctx, in.Host)
	n := max(in.Concurrency, 1)
	sem := make(chan struct{}, n)
	errs := make(chan error, max(len(in.URLs), in.TopUp))
	rulesByToken := map[string]*robots.Rules{}
	sitemapsChecked := map[string]bool{} // crawls whose sitemap discovery on this host is settled
	var cached *store.Robots
	for i := 0; ; i++ {
		if i == len(b.in.URLs) {
			more, err := b.topUp(ctx, n)
			if err != nil {
				return b.wait(sem, errs, err)
			}
			if !more {
				break
			}
		}
		u := b.in.URLs[i]
		if b.res.Finished[i] {
			continue
		}
		select {
		case err := <-errs: // a request of this batch failed on our side: stop, retry the activity
			return b.wait(sem, nil, err)
		default:
		}
		ci, err := f.Crawls.get(ctx, u.CrawlID)
		if err != nil {
			return b.wait(sem, errs, err)
		}
		rules := rulesByToken[ci.token]
		if rules == nil {
			if cached == nil || time.Now().After(cached.ExpiresAt) {
				b.drain(sem) // robots.txt alone, before any page
				if cached, err = f.robots(ctx, b, u.URL, ci); err != nil {
					return b.result(), err
				}
			}
			rules = robots.FromStatus(cached.Status, []byte(cached.Body), ci.token)
			rulesByToken[ci.token] = rules
			if d := rules.CrawlDelay; d > 0 {
				b.mu.Lock()
				b.res.CrawlDelay, b.res.CrawlDelayCapped = min(d, in.MaxCrawlDelay), d > in.MaxCrawlDelay
				b.mu.Unlock()
			}
		}
		if !sitemapsChecked[ci.id] {
			sitemapsChecked[ci.id] = true
			if err := f.discoverSitemaps(ctx, ci, in.Host, cached, u.URL); err != nil {
				return b.wait(sem, errs, err)
			}
		}
		// Acquire a place first: a response that arrives meanwhile (a Retry-After) can still
		// keep this URL from being requested.
		sem <- struct{}{}
		o, skip := b.withoutRequest(ci, u, rules)
		var start time.Time
		if !skip {
			start, err = b.take(ctx)
			if errors.Is(err, errDeferred) {
				o, skip = b.withoutRequest(ci, u, rules)
			} else if err != nil {
				<-sem
				return b.wait(sem, errs, err)
			}
		}
		if !skip {
			// The crawl may have been stopped, or the URL blocked, since the batch claimed it;
			// or an attempt of this batch that died fetched it already: hand its page on.
			state, crawlState, err := f.Store.URLState(ctx, u.CrawlID, u.Hash)
			if err == nil && state == store.StateClaimed && crawlState == store.CrawlPaused {
				// Paused since the claim: this and the crawl's other URLs of the batch go back
				// to the queue now, not one slot at a time.
				b.endRequest()
				<-sem
				if err := b.releaseCrawl(ctx, u.CrawlID); err != nil {
					return b.wait(sem, errs, err)
				}
				continue
			}
			var page *crawl.PageRef
			if err == nil && state == store.StateFetched {
				var pages []crawl.PageRef
				if pages, err = fetchedOf(ctx, f.Store, []store.Claimed{u}); err == nil && len(pages) == 1 {
					page = &pages[0]
				}
			}
			if err != nil {
				b.endRequest()
				<-sem
				return b.wait(sem, errs, err)
			}
			if state != store.StateClaimed {
				b.endRequest()
				<-sem
				b.finish(ctx, i, page)
				continue
			}
		}
		if skip {
			<-sem
			if err := f.record(ctx, in.Host, o); err != nil {
				return b.wait(sem, errs, err)
			}
			if o.State == store.StateSkipped && strings.HasPrefix(o.SkipReason, "robots.txt") {
				count(ctx, metrics.RobotsBlocked, 1)
			}
			b.finish(ctx, i, nil)
			continue
		}
		go func() {
			defer func() { <-sem }()
			o, page, eff, err := f.fetchOne(ctx, ci, u, start, b.sent(ctx, start))
			if err == nil {
				err = f.record(ctx, in.Host, o)
			}
			if err == nil {
				failpoint.Hit(failpoint.FetchRecorded)
				observeFetch(ctx, o)
			}
			if err != nil {
				errs <- err
				b.endRequest()
				return
			}
			b.apply(eff)
			b.finish(ctx, i, page)
			if o.Err != "" {
				activity.GetLogger(ctx).Debug("fetch failed", "crawl", u.CrawlID, "host", in.Host, "url", u.URL, "error", o.Err, "state", o.State)
			}
		}()
	}
	res, err := b.wait(sem, errs, nil)
	if err != nil || len(in.URLs) == 0 {
		return res, err
	}
	ci, cerr := f.Crawls.get(ctx, in.URLs[0].CrawlID)
	if cerr != nil {
		return res, cerr
	}
	res.Retired, err = f.hostHealth(ctx, in.Host, res, ci.spec.RetireAfter.D())
	failpoint.Hit(failpoint.BatchFetched)
	activity.GetLogger(ctx).Info("fetch batch done", "host", in.Host, "crawl", ci.id, "urls", len(b.in.URLs), "toppedUp", len(res.TopUp),
		"requests", res.Requests, "fetched", res.Fetched, "notModified", res.NotModified, "errors", res.Errors,
		"skipped", res.Skipped, "deferred", res.Deferred, "lastError", res.LastError)
	return res, err
}

// isNoSuchHost reports a DNS answer that the name does not exist.
func isNoSuchHost(err error) bool {
	var dnsErr *net.DNSError
	return errors.As(err, &dnsErr) && dnsErr.IsNotFound
}

// hostHealth keeps the dead-site clock: a sensible answer stops it, a DNS "no such host" or a
// front page answering 404/410 starts it, and a host failing longer than retireAfter is retired.
func (f *Fetcher) hostHealth(ctx context.Context, host string, res FetchBatchResult, retireAfter time.Duration) (bool, error) {
	switch {
	case res.Gone == "front page gone" || (res.Gone != "" && !res.Answered):
		if err := f.Store.HostFailing(ctx, host, res.Gone); err != nil {
			return false, err
		}
		return f.Store.RetireIfDead(ctx, host, retireAfter)
	case res.Answered:
		return false, f.Store.HostHealthy(ctx, host)
	}
	return false, nil
}

func (b *batch) delay() time.Duration { return max(b.in.Delay, b.res.CrawlDelay) }

// pace applies the pacing of the crawls urls belong to. Crawls sharing a host each set their
// own, and a busy host is not signalled when another crawl adds URLs to it: the batch keeps
// the politest pacing of its URLs' crawls, whatever the workflow last heard of.
func (b *batch) pace(ctx context.Context, urls []store.Claimed) error {
	for _, u := range urls {
		ci, err := b.f.Crawls.get(ctx, u.CrawlID)
		if err != nil {
			return err
		}
		b.mu.Lock()
		b.in.Delay = max(b.in.Delay, ci.spec.Delay.D())
		if c := ci.spec.Concurrency; c > 0 && c < b.in.Concurrency {
			b.in.Concurrency = c
		}
		b.mu.Unlock()
	}
	return nil
}

// topUp claims more of the host's due URLs while the batch has room and time left in its
// window, so a host whose URLs trickle in (links found a few at a time) still fills its
// batches: a batch costs the host workflow the same history events whatever it carries. Not
// after a Retry-After or errors, and not for concurrent batches (their semaphore is sized).
func (b *batch) topUp(ctx context.Context, concurrency int) (bool, error) {
	b.mu.Lock()
	room := b.in.TopUp - len(b.in.URLs)
	stop := room <= 0 || b.in.Lease <= 0 || concurrency > 1 || time.Since(b.began) >= b.in.Window ||
		!b.res.DeferUntil.IsZero() || b.res.ConsecutiveErrors > 0 || b.res.Gone != ""
	b.mu.Unlock()
	if stop || ctx.Err() != nil {
		return false, nil
	}
	// Owned by this activity across its attempts: a retry takes back what a dead attempt
	// claimed after its last heartbeat, and drops what it already carries.
	owner := b.topUpOwner(ctx)
	// Quietly: the host workflow claims again after this batch, no admission need wake it.
	claimed, _, err := b.f.Store.ClaimQuietly(ctx, b.in.Host, owner, room, b.in.Lease, time.Now())
	if err != nil {
		return false, err
	}
	carried := make(map[string]bool, len(b.in.URLs))
	for _, u := range b.in.URLs {
		carried[u.CrawlID+"\x00"+string(u.Hash)] = true
	}
	var more []store.Claimed
	for _, u := range claimed {
		if !carried[u.CrawlID+"\x00"+string(u.Hash)] {
			more = append(more, u)
		}
	}
	if len(more) == 0 {
		return false, nil
	}
	failpoint.Hit(failpoint.TopUpClaimed)
	if err := b.pace(ctx, more); err != nil {
		return false, err
	}
	b.mu.Lock()
	b.in.URLs = append(b.in.URLs, more...)
	b.res.Finished = append(b.res.Finished, make([]bool, len(more))...)
	b.res.TopUp = append(b.res.TopUp, more...)
	b.mu.Unlock()
	b.heartbeat(ctx)
	return true, nil
}

// jitterMargin is added to a host's delay when its next slot is booked: connection set-up and
// scheduling on either side can bring two requests closer at the server than they left here,
// and the delay is a floor the server must see. A fifth of the delay, at most 50 ms.
func jitterMargin(delay time.Duration) time.Duration { return min(delay/5, 50*time.Millisecond) }

// refusedHost says why the host's every address is forbidden ("" if it may be dialed).
func (f *Fetcher) refusedHost(ctx context.Context, authority string) string {
	if f.Dialer == nil {
		return ""
	}
	host := authority
	if h, _, err := net.SplitHostPort(authority); err == nil {
		host = h
	}
	if why := f.Dialer.Refuses(ctx, strings.Trim(host, "[]")); why != "" {
		return "refused address (" + why + ")"
	}
	return ""
}

// limitedIP is the address per-IP politeness counts the host's requests under, or the zero
// address when the limit does not apply (off, a connect-to target, or unresolvable: the
// request itself will then fail and be retried).
func (f *Fetcher) limitedIP(ctx context.Context, authority string) netip.Addr {
	if f.IPGap <= 0 || f.Dialer == nil {
		return netip.Addr{}
	}
	host := authority
	if h, _, err := net.SplitHostPort(authority); err == nil {
		host = h
	}
	ip, override, err := f.Dialer.Target(ctx, host)
	if err != nil || (override && !f.IPGapOverride) {
		return netip.Addr{}
	}
	return ip
}

// withoutRequest decides URLs that need no request now: forbidden by robots.txt, waiting for
// an unreachable robots.txt, or deferred by a Retry-After.
func (b *batch) withoutRequest(ci *crawlInfo, u store.Claimed, rules *robots.Rules) (store.FetchOutcome, bool) {
	o := store.FetchOutcome{CrawlID: u.CrawlID, Hash: u.Hash, URL: u.URL, Attempts: u.Attempts}
	b.mu.Lock()
	defer b.mu.Unlock()
	if until := b.res.DeferUntil; !until.IsZero() && time.Now().Before(until) {
		o.State, o.NextFetchAt = store.StateQueued, until
		b.res.Deferred++
		return o, true
	}
	pu, err := url.Parse(u.URL)
	if err != nil {
		o.State, o.SkipReason = store.StateSkipped, "unparseable URL"
		b.res.Skipped++
		return o, true
	}
	if rules.Allowed(pu.RequestURI()) {
		return o, false
	}
	o.State, o.SkipReason = store.StateSkipped, "robots.txt"
	if rules.DisallowAll() { // unreachable robots.txt: wait for it, up to maxAttempts
		o.Attempts++
		o.Err = rules.Reason
		if o.Attempts < ci.spec.MaxAttempts {
			o.State, o.SkipReason, o.NextFetchAt = store.StateQueued, "", time.Now().Add(backoff(ci.spec.RetryBase.D(), o.Attempts))
			b.res.Deferred++
			return o, true
		}
		o.SkipReason = "robots.txt unreachable"
	}
	b.res.Skipped++
	return o, true
}

// maxLateSlots is how many slots in a row one request gives up for waking too late.
const maxLateSlots = 3

// errDeferred says the host asked us to wait (Retry-After) while a request waited for its slot.
var errDeferred = errors.New("host deferred")

// take waits for the host's next request slot and books it.
func (b *batch) take(ctx context.Context) (time.Time, error) {
	for given := 0; ; {
		b.mu.Lock()
		if time.Now().Before(b.res.DeferUntil) {
			b.mu.Unlock()
			return time.Time{}, errDeferred
		}
		// The margin here too: when robots.txt's Crawl-delay raises the delay mid-batch, the
		// slot booked before it knew is closer than the new delay plus margin.
		next := later(b.next, b.res.LastRequestAt.Add(b.delay()+jitterMargin(b.delay())))
		wait := time.Until(next)
		if wait <= 0 {
			// The slot is booked in Postgres — the host's schedule, and its address's when the
			// per-IP limit applies — so a retried batch and a stale attempt of it that has not
			// noticed yet share one schedule. Under the batch's lock, so this batch's own next
			// request is spaced from when this one really starts.
			start, err := b.f.Store.BookSlot(ctx, b.in.Host, b.delay()+jitterMargin(b.delay()), b.ip, b.f.IPGap+jitterMargin(b.f.IPGap), time.Now())
			if err != nil {
				b.mu.Unlock()
				return time.Time{}, err
			}
			b.next = start.Add(b.delay() + jitterMargin(b.delay()))
			b.res.LastRequestAt = start
			b.res.Requests++
			b.inFlight++
			b.res.PeakInFlight = max(b.res.PeakInFlight, b.inFlight)
			b.mu.Unlock()
			if d := time.Until(start); d > 0 {
				t := time.NewTimer(d)
				select {
				case <-ctx.Done():
					t.Stop()
					b.endRequest()
					return time.Time{}, ctx.Err()
				case <-t.C:
				}
			}
			// Slots are booked a delay plus a margin apart. A request that would leave more
			// than half the margin after its slot (this process was descheduled: an overloaded
			// machine, a stalled GC) could land too close to the next slot's request, which
			// may leave on time from another worker: give the slot up and book a new one. A
			// few times at most: with a delay of milliseconds, booking alone can take longer
			// than the tolerance, and the request's late departure still pushes the next slot.
			if late := time.Since(start); late > b.tolerance() && given < maxLateSlots {
				given++
				b.mu.Lock()
				b.res.Requests--
				b.res.LateSlots++
				b.inFlight--
				b.mu.Unlock()
				continue
			}
			return start, nil
		}
		b.mu.Unlock()
		t := time.NewTimer(min(wait, 5*time.Second))
		select {
		case <-ctx.Done():
			t.Stop()
			return time.Time{}, ctx.Err()
		case <-t.C:
			b.heartbeat(ctx)
		}
	}
}

// tolerance is how late after its slot a request may leave: half the margin slots are booked
// apart by.
func (b *batch) tolerance() time.Duration {
	t := jitterMargin(b.delay()) / 2
	if b.ip.IsValid() {
		t = min(t, jitterMargin(b.f.IPGap)/2)
	}
	return t
}

// sent returns the hook told when the request of the slot at start really left. One that left
// later than the tolerance (a slow dial, a process descheduled after take's check) pushes the
// host's and address's next slots out to a full delay after its departure, so the server still
// sees the delay between it and the next request, from this worker or another.
func (b *batch) sent(ctx context.Context, start time.Time) func(time.Time) {
	return func(at time.Time) {
		b.mu.Lock()
		d := b.delay()
		if at.Sub(start) <= b.tolerance() {
			b.mu.Unlock()
			return
		}
		b.res.LateDepartures++
		b.next = later(b.next, at.Add(d+jitterMargin(d)))
		b.mu.Unlock()
		hostNext, ipNext := at.Add(d+jitterMargin(d)), at.Add(b.f.IPGap+jitterMargin(b.f.IPGap))
		go func() {
			ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			if err := b.f.Store.PushSlot(ctx, b.in.Host, hostNext, b.ip, ipNext); err != nil {
				activity.GetLogger(ctx).Warn("push a late request's next slot", "host", b.in.Host, "error", err)
			}
		}()
	}
}

func (b *batch) endRequest() {
	b.mu.Lock()
	b.inFlight--
	b.mu.Unlock()
}

// effect is what one request changes in the batch's result.
type effect struct {
	fetched, notModified, errors, skipped int
	failed, succeeded                     bool
	deferUntil                            time.Time
	lastError                             string
	gone                                  string // "dns" or "front page gone": the host may be dead
}

func (b *batch) apply(e effect) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.inFlight--
	r := &b.res
	if e.gone != "" {
		r.Gone = e.gone
	} else if e.succeeded {
		r.Answered = true
	}
	r.Fetched += e.fetched
	r.NotModified += e.notModified
	r.Errors += e.errors
	r.Skipped += e.skipped
	switch {
	case e.failed:
		r.ConsecutiveErrors++
		r.LastError = e.lastError
	case e.succeeded:
		r.ConsecutiveErrors = 0
	}
	if e.deferUntil.After(r.DeferUntil) {
		r.DeferUntil = e.deferUntil
	}
}

func (b *batch) finish(ctx context.Context, i int, page *crawl.PageRef) {
	b.mu.Lock()
	b.res.Finished[i] = true
	b.res.Done++
	if page != nil && !slices.ContainsFunc(b.res.Pages, func(p crawl.PageRef) bool {
		return p.CrawlID == page.CrawlID && bytes.Equal(p.Hash, page.Hash)
	}) { // (a retry may have handed it on already: handOnOwned)
		b.res.Pages = append(b.res.Pages, *page)
	}
	b.mu.Unlock()
	b.heartbeat(ctx)
}

// releaseCrawl returns the batch's unfinished URLs of a paused crawl to the queue and finishes
// them in this batch: the crawl's resume claims them again.
func (b *batch) releaseCrawl(ctx context.Context, crawlID string) error {
	var release []store.Claimed
	var idx []int
	b.mu.Lock()
	for i, u := range b.in.URLs {
		if u.CrawlID == crawlID && !b.res.Finished[i] {
			release, idx = append(release, u), append(idx, i)
		}
	}
	b.mu.Unlock()
	if len(release) == 0 {
		return nil
	}
	if err := b.f.Store.Release(ctx, release); err != nil {
		return err
	}
	for _, i := range idx {
		b.finish(ctx, i, nil)
	}
	return nil
}

// topUpOwner is the claim owner of the batch's own top-ups (per activity for batches from
// workflows that pass no owner).
func (b *batch) topUpOwner(ctx context.Context) string {
	if b.in.Owner != "" {
		return TopUpOwner(b.in.Owner)
	}
	info := activity.GetInfo(ctx)
	return "fetch:" + info.WorkflowExecution.RunID + "/" + info.ActivityID
}

// handOnOwned adds to the result the pages fetched under the batch's claims that no attempt
// reported: the host workflow hands them to processing with the rest.
func (b *batch) handOnOwned(ctx context.Context) error {
	owners := []string{b.topUpOwner(ctx)}
	if b.in.Owner != "" {
		owners = append(owners, b.in.Owner)
	}
	pages, err := b.f.Store.FetchedOwned(ctx, b.in.Host, owners)
	if err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	have := make(map[string]bool, len(b.res.Pages))
	for _, p := range b.res.Pages {
		have[p.CrawlID+"\x00"+string(p.Hash)] = true
	}
	for _, p := range pageRefs(pages) {
		if !have[p.CrawlID+"\x00"+string(p.Hash)] {
			b.res.Pages = append(b.res.Pages, p)
		}
	}
	return nil
}

func (b *batch) heartbeat(ctx context.Context) {
	activity.RecordHeartbeat(ctx, b.result())
}

func (b *batch) result() FetchBatchResult {
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.res
	r.Finished = append([]bool(nil), r.Finished...)
	r.TopUp = append([]store.Claimed(nil), r.TopUp...)
	r.Pages = append([]crawl.PageRef(nil), r.Pages...)
	return r
}

// drain waits until no request is in flight.
func (b *batch) drain(sem chan struct{}) {
	for i := 0; i < cap(sem); i++ {
		sem <- struct{}{}
	}
	for i := 0; i < cap(sem); i++ {
		<-sem
	}
}

// wait lets the requests in flight finish and returns the result, or the first error.
func (b *batch) wait(sem chan struct{}, errs chan error, err error) (FetchBatchResult, error) {
	b.drain(sem)
	if err == nil && errs != nil {
		select {
		case err = <-errs:
		default:
		}
	}
	return b.result(), err
}

// robots fetches and caches the host's robots.txt.
func (f *Fetcher) robots(ctx context.Context, b *batch, pageURL string, ci *crawlInfo) (*store.Robots, error) {
	cached, err := f.Store.HostRobots(ctx, b.in.Host)
	if err != nil {
		return nil, err
	}
	if cached != nil && time.Now().Before(cached.ExpiresAt) {
		return cached, nil
	}
	pu, _ := url.Parse(pageURL)
	target := pu.Scheme + "://" + pu.Host + "/robots.txt"
	now := time.Now()
	r := &store.Robots{FetchedAt: now, ExpiresAt: now.Add(robots.TTL)}
	// Redirects are followed here, up to five (RFC 9309 §2.3.1.2), each hop a request under
	// the host's schedule so the host never sees two closer than its delay.
	var resp *fetch.Response
	for hop := 0; ; hop++ {
		var start time.Time
		sent := func(time.Time) {}
		other := f.otherHost(b.in.Host, target)
		if other != "" {
			// A hop to another host (example.com -> www.example.com) is a request to that host:
			// it takes that host's slot, as its own workflow's requests do.
			if start, err = f.takeOtherHost(ctx, other, b.delay()); err != nil {
				return nil, err
			}
		} else {
			if start, err = b.take(ctx); err != nil {
				return nil, err
			}
			sent = b.sent(ctx, start)
		}
		resp, err = f.Client.Get(ctx, fetch.Request{URL: target, UserAgent: ci.userAgent, MaxBytes: robots.MaxBytes,
			Timeout: ci.spec.RequestTimeout.D(), Sent: sent})
		if other == "" {
			b.endRequest()
		}
		if err != nil || resp.Status < 300 || resp.Status >= 400 || resp.Location == "" || hop == 5 {
			break
		}
		target = resp.Location
	}
	if err != nil && ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if isNoSuchHost(err) {
		b.mu.Lock()
		b.res.Gone = "dns"
		b.mu.Unlock()
	}
	switch {
	case err != nil || resp == nil:
		r.Status = 0 // unreachable (network error, refused address): complete disallow for now
	case resp.Status >= 300 && resp.Status < 400:
		r.Status = 0 // a redirect loop or chain past five hops counts as unreachable
	default:
		r.Status, r.Body = resp.Status, string(resp.Body)
	}
	count(ctx, metrics.RobotsFetches, 1, "outcome", robotsOutcome(r.Status))
	if cached != nil && robots.KeepCached(cached.Status, cached.FetchedAt, r.Status, now) {
		// Unreachable now, but we hold a good copy: keep obeying it (§2.3.1.4), look again soon.
		r.Status, r.Body, r.FetchedAt, r.Sitemaps = cached.Status, cached.Body, cached.FetchedAt, cached.Sitemaps
		r.ExpiresAt = now.Add(min(robots.UnreachableTTL, backoff(ci.spec.RetryBase.D(), 1)))
		if err := f.Store.SaveRobots(ctx, b.in.Host, *r, robots.FromStatus(r.Status, []byte(r.Body), ci.token).CrawlDelay); err != nil {
			return nil, err
		}
		return r, nil
	}
	rules := robots.FromStatus(r.Status, []byte(r.Body), ci.token)
	if rules.DisallowAll() {
		r.ExpiresAt = now.Add(min(robots.UnreachableTTL, backoff(ci.spec.RetryBase.D(), 1)))
	}
	r.Sitemaps = rules.Sitemaps
	if err := f.Store.SaveRobots(ctx, b.in.Host, *r, rules.CrawlDelay); err != nil {
		return nil, err
	}
	b.heartbeat(ctx)
	return r, nil
}

// discoverSitemaps admits, once per crawl and host, the sitemaps robots.txt names (or
// /sitemap.xml when it names none), whichever crawl fetched that robots.txt.
func (f *Fetcher) discoverSitemaps(ctx context.Context, ci *crawlInfo, host string, r *store.Robots, pageURL string) error {
	if r == nil || r.Status < 200 || r.Status >= 500 { // unreachable robots.txt: look again later
		return nil
	}
	first, err := f.Store.StartSitemapDiscovery(ctx, ci.id, host)
	if err != nil || !first {
		return err
	}
	base, err := url.Parse(pageURL)
	if err != nil {
		return nil
	}
	sitemaps := r.Sitemaps
	if len(sitemaps) == 0 {
		sitemaps = []string{"/sitemap.xml"}
	}
	f.admitSitemaps(ctx, ci, base, sitemaps, 0, 0)
	return nil
}

// MaxSitemapNesting bounds sitemap indexes that list indexes.
const MaxSitemapNesting = 3

// admitSitemaps admits sitemap files (from robots.txt or an index) as URLs of their hosts: they
// are fetched under politeness like pages, and read when they arrive.
func (f *Fetcher) admitSitemaps(ctx context.Context, ci *crawlInfo, base *url.URL, locs []string, depth, nesting int) {
	var cands []store.Candidate
	for _, loc := range locs {
		n, err := f.Crawls.Norm.ResolveRequest(base, loc)
		if err != nil {
			continue
		}
		c := f.Crawls.candidate(n, depth, nesting, sourceSitemapFile)
		if ci.admissible(c) == "" { // the same rules as links: scope, deny and block patterns, traps
			cands = append(cands, c)
		}
	}
	if len(cands) == 0 {
		return
	}
	if _, err := f.Admitter.admit(ctx, ci, cands); err != nil {
		activity.GetLogger(ctx).Warn("admitting sitemaps failed", "crawl", ci.id, "error", err)
	}
}

// Sources of frontier URLs that are sitemaps rather than pages.
const (
	sourceSitemapFile = "sitemap-file" // a sitemap or sitemap index document
	sourceSitemap     = "sitemap"      // a page a sitemap lists
)

// readSitemap admits what a fetched sitemap lists: pages, or (for an index) more sitemaps.
func (f *Fetcher) readSitemap(ctx context.Context, ci *crawlInfo, u store.Claimed, body []byte) string {
	sm, err := sitemap.Parse(body)
	if err != nil {
		return err.Error()
	}
	base, _ := url.Parse(u.URL)
	if sm.Index {
		locs := make([]string, len(sm.Entries))
		for i, e := range sm.Entries {
			locs[i] = e.Loc
		}
		if u.Hops+1 > MaxSitemapNesting {
			return "sitemap indexes nested too deep"
		}
		f.admitSitemaps(ctx, ci, base, locs, u.Depth, u.Hops+1)
		return ""
	}
	var cands []store.Candidate
	for _, e := range sm.Entries {
		n, err := f.Crawls.Norm.ResolveRequest(base, e.Loc)
		if err != nil {
			continue
		}
		c := f.Crawls.candidate(n, u.Depth+1, 0, sourceSitemap)
		c.HintS = int(recrawlHint(e, time.Now()) / time.Second)
		if e.Priority >= 0 { // the sitemap's own <priority> replaces the 0.5 default
			c.Priority += float32(e.Priority-0.5) * 0.5
		}
		if !e.LastMod.IsZero() && time.Since(e.LastMod) < 30*24*time.Hour { // changed lately
			c.Priority += 0.25
		}
		if ci.admissible(c) == "" {
			cands = append(cands, c)
		}
	}
	if _, err := f.Admitter.admit(ctx, ci, cands); err != nil {
		return "admit sitemap entries: " + err.Error()
	}
	if sm.Truncated {
		return "sitemap truncated at the protocol's limits"
	}
	return ""
}

// fetchOne requests one URL (its slot started at start) and decides what becomes of it. An
// error means our side failed (MinIO): the activity is retried and resumes at this URL.
func (f *Fetcher) fetchOne(ctx context.Context, ci *crawlInfo, u store.Claimed, start time.Time, sent func(time.Time)) (store.FetchOutcome, *crawl.PageRef, effect, error) {
	spec := ci.spec
	var eff effect
	o := store.FetchOutcome{CrawlID: u.CrawlID, Hash: u.Hash, URL: u.URL, Attempts: u.Attempts,
		FetchKey: fmt.Sprintf("%s/%x/%d/%d", u.CrawlID, u.Hash, u.FetchCount, u.Attempts)}
	resp, err := f.Client.Get(ctx, fetch.Request{URL: u.URL, UserAgent: ci.userAgent, ETag: u.ETag, LastModified: u.LastModified,
		MaxBytes: spec.MaxBodyBytes, Timeout: spec.RequestTimeout.D(), Sent: sent})
	o.FetchedAt, o.Duration = start, time.Since(start)
	// schedule finishes the URL, or queues its recrawl after an interval adapted to what this
	// fetch found (crawl.Recrawl).
	schedule := func(change crawl.Change) {
		o.State = store.StateDone
		if next := spec.Recrawl.Next(seconds(u.RecrawlS), change, seconds(u.HintS)); next > 0 {
			o.State, o.NextFetchAt, o.RecrawlS = store.StateQueued, start.Add(next), int(next/time.Second)
		}
	}
	retry := func(why string, deferUntil time.Time) {
		o.Err = why
		o.Attempts++
		eff.errors, eff.failed, eff.lastError = 1, true, why
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
			eff.skipped = 1
			return o, nil, eff, nil
		}
		if ctx.Err() != nil {
			return o, nil, eff, ctx.Err() // we are stopping; not the site's failure
		}
		if isNoSuchHost(err) {
			eff.gone = "dns"
		}
		retry(err.Error(), time.Time{})
		return o, nil, eff, nil
	}
	o.Status, o.ContentType, o.FinalURL, o.Truncated = resp.Status, resp.ContentType, resp.FinalURL, resp.Truncated
	o.Bytes, o.ETag, o.LastModified = int64(len(resp.Body)), resp.ETag, resp.LastModified
	o.RequestHead, o.ResponseHead = resp.RequestHead, resp.ResponseHead
	switch s := resp.Status; {
	case s >= 200 && s < 300:
		h := blob.ContentHash(resp.Body)
		change := crawl.FirstFetch
		if len(u.ContentHash) > 0 {
			changed := !bytes.Equal(u.ContentHash, h[:])
			o.Changed, change = &changed, crawl.Unchanged
			if changed {
				change = crawl.Changed
			}
		}
		key, _, err := f.Blob.PutBody(ctx, resp.Body) // content-addressed: an unchanged body writes nothing
		if err != nil {
			return o, nil, eff, err
		}
		o.BodyKey, o.ContentHash = key, h[:]
		eff.fetched, eff.succeeded = 1, true
		if u.Source == sourceSitemapFile {
			o.Note = f.readSitemap(ctx, ci, u, resp.Body)
			schedule(change)
			return o, nil, eff, nil
		}
		if fetch.IsHTML(resp.ContentType) && change != crawl.Unchanged {
			o.State = store.StateFetched
			return o, &crawl.PageRef{CrawlID: u.CrawlID, Hash: u.Hash, URL: u.URL, FinalURL: resp.FinalURL, BodyKey: key,
				ContentType: resp.ContentType, ContentHash: h[:], Depth: u.Depth, Size: o.Bytes,
				Change: change, RecrawlS: u.RecrawlS, HintS: u.HintS}, eff, nil
		}
		schedule(change) // not HTML, or the same bytes as last time: its document stands
	case s == 304:
		eff.notModified, eff.succeeded = 1, true
		unchanged := false
		o.Changed = &unchanged
		schedule(crawl.Unchanged)
	case s >= 300 && s < 400:
		eff.succeeded = true
		o.State = store.StateDone // a redirect's own URL is not recrawled; its target is
		o.Note = f.followRedirect(ctx, ci, u, resp.Location)
	case s == 429 || s == 503:
		var until time.Time
		if wait := min(resp.RetryAfter, time.Hour); wait > 0 {
			until = time.Now().Add(wait)
			eff.deferUntil = until
		}
		retry(fmt.Sprintf("HTTP %d", s), until)
	case s == 408 || s >= 500:
		retry(fmt.Sprintf("HTTP %d", s), time.Time{})
	default: // other 4xx: a final answer, recorded
		eff.succeeded = true
		if s != 404 && s != 410 {
			schedule(crawl.Unchanged)
			break
		}
		if strings.HasSuffix(strings.SplitN(u.URL, "?", 2)[0], "://"+urlnorm.Authority(u.URL)+"/") {
			eff.gone = "front page gone"
		}
		o.GoneCount = u.GoneCount + 1
		if o.GoneCount >= spec.Recrawl.GoneAfter { // gone for good: no more recrawls
			o.State = store.StateDone
			break
		}
		schedule(crawl.Unchanged)
	}
	return o, nil, eff, nil
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
	target, err := f.Crawls.Norm.ResolveRequest(base, location)
	if err != nil {
		return "bad redirect target: " + err.Error()
	}
	source := "redirect"
	if u.Source == sourceSitemapFile {
		source = sourceSitemapFile // a sitemap behind a redirect (http -> https) is still read as one
	}
	c := f.Crawls.candidate(target, u.Depth, u.Hops+1, source)
	if why := ci.admissible(c); why != "" {
		return "redirect target refused (" + why + "): " + target
	}
	if _, err := f.Admitter.admit(ctx, ci, []store.Candidate{c}); err != nil {
		return "admit redirect target: " + err.Error()
	}
	return ""
}

// record stores an outcome. One that Postgres refuses for its values (what the web sent
// could not be made storable) is recorded as this URL's skip with the reason, so it costs
// that URL, never its batch, host or crawl.
func (f *Fetcher) record(ctx context.Context, host string, o store.FetchOutcome) error {
	_, err := f.Store.RecordFetch(ctx, host, o)
	if err == nil || !store.IsDataError(err) {
		return err
	}
	activity.GetLogger(ctx).Warn("outcome not storable: skipping the URL", "crawl", o.CrawlID, "url", o.URL, "error", err)
	count(ctx, metrics.Unstorable, 1)
	bare := store.FetchOutcome{CrawlID: o.CrawlID, Hash: o.Hash, URL: o.URL, FetchKey: o.FetchKey, FetchedAt: o.FetchedAt,
		Status: o.Status, Duration: o.Duration, Attempts: o.Attempts, State: store.StateSkipped, SkipReason: "unstorable response",
		Err: err.Error()}
	_, err = f.Store.RecordFetch(ctx, host, bare)
	return err
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// recrawlHint is the first recrawl interval a sitemap entry suggests: its <changefreq>, else
// half the time since its <lastmod> (a page unchanged for long changes rarely), else none.
func recrawlHint(e sitemap.Entry, now time.Time) time.Duration {
	if d := crawl.ChangeFreqInterval(e.ChangeFreq); d > 0 {
		return d
	}
	if !e.LastMod.IsZero() && e.LastMod.Before(now) {
		return max(now.Sub(e.LastMod)/2, time.Hour)
	}
	return 0
}

// robotsOutcome classes a robots.txt answer as RFC 9309 reads it.
func robotsOutcome(status int) string {
	switch {
	case status >= 200 && status < 300:
		return "rules"
	case status >= 400 && status < 500:
		return "allow_all"
	}
	return "unreachable"
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

// otherHost is the authority of target when it is not host's ("" when it is, or cannot say).
func (f *Fetcher) otherHost(host, target string) string {
	n, err := f.Crawls.Norm.Normalize(target)
	if err != nil {
		return ""
	}
	if a := urlnorm.Authority(n); a != host {
		return a
	}
	return ""
}

// takeOtherHost books the next request slot of another host, a delay after its last request
// start whoever made it, and waits for it.
func (f *Fetcher) takeOtherHost(ctx context.Context, host string, delay time.Duration) (time.Time, error) {
	gap := delay + jitterMargin(delay)
	start, err := f.Store.BookSlot(ctx, host, gap, f.limitedIP(ctx, host), f.IPGap+jitterMargin(f.IPGap), time.Now())
	if err != nil {
		return time.Time{}, err
	}
	if d := time.Until(start); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-t.C:
		}
	}
	return start, nil
}
