package fetching

import (
	"context"
	"net/netip"
	"net/url"
	"sync"
	"time"

	"github.com/trawlerdev/trawler/internal/clock"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/pacing"
	"github.com/trawlerdev/trawler/internal/policy"
	"github.com/trawlerdev/trawler/internal/robots"
	"github.com/trawlerdev/trawler/internal/store"
)

// leaseRun is one running fetch lease (FetchBatch): the chunk of URLs it is at, its result under a
// lock, and the host's request schedule.
type leaseRun struct {
	f        *Stage
	in       LeaseInput
	urls     []crawl.Claimed // the chunk
	mu       sync.Mutex
	finished []bool      // by index in urls: the URL's outcome is recorded (or it was handed back)
	res      LeaseResult // the result so far
	inFlight int
	// recording counts requests whose outcome is not recorded yet (their bodies wait for
	// their segment to be stored).
	recording sync.WaitGroup
	next      time.Time     // the earliest start of the next request
	answered  time.Time     // when the last request's answer came (one request in flight at a time)
	ip        netip.Addr    // the host's address, when the per-IP limit applies
	window    pacing.Window // the host's time booked for this lease's requests (book)
	cursor    int           // the URL the lease is at: a robots.txt request books ahead from it
	began     time.Time
	beatMu    sync.Mutex // one beat at a time (beat)
	// healthKnown: failing says whether the host's dead-site clock ran when the lease read
	// its robots.txt cache (see hostHealth).
	healthKnown, failing bool
	// baseDelay is the delay the workflow asked for; crawls are the crawls whose URLs the
	// lease has claimed: their pacing (a throttle included) is read again at each chunk.
	baseDelay time.Duration
	crawls    map[string]bool
	pacedAt   time.Time
	// autoK is the largest autoThrottle of the lease's crawls (0: off), latency the host's
	// recent response time (an exponentially weighted mean).
	autoK   float64
	latency time.Duration
	// slotKey names the schedule the lease books its requests on: its host's, or its
	// registrable domain's (politenessKey "domain"), set by its first chunk's crawls.
	slotKey string
	// jars are the cookie jars of the lease's crawls that keep cookies, by crawl (cookies.go).
	jars map[string]*cookieJar
	// proxyErr is why robots.txt could not be asked for through a crawl's proxy, by the proxy
	// (policy.Crawl.ProxyKey): the lease's URLs of crawls through it then fail as network
	// errors of their own (withoutRequest).
	proxyErr map[string]string
	// sem holds a place for each request in flight (in.Concurrency of them); errs the first
	// failure on our side one of them reported (fail).
	sem  chan struct{}
	errs chan error
}

// withoutRequest decides URLs that need no request now: forbidden by robots.txt, waiting for
// an unreachable robots.txt, or deferred by a Retry-After.
// unresolved is the outcome of a URL whose crawl names a secret (a header, its proxy) this
// worker cannot read: a network error of the URL, counted and dead-lettered at maxAttempts,
// and no request sent — not without the header, not around the proxy.
func (b *leaseRun) unresolved(ci *policy.Crawl, u crawl.Claimed) store.FetchOutcome {
	now := b.f.clock().Now()
	o := store.FetchOutcome{CrawlID: u.CrawlID, Hash: u.Hash, URL: u.URL, Attempts: u.Attempts + 1, Err: ci.Unresolved,
		FetchKey: crawl.FetchKey(u.CrawlID, u.Hash, u.FetchCount, u.Attempts), FetchedAt: now}
	o.State, o.NextFetchAt = retryAfterFailure(ci.Spec, o.Attempts, now, time.Time{})
	b.mu.Lock()
	defer b.mu.Unlock()
	b.res.Errors++
	b.res.ConsecutiveErrors++
	b.res.LastError = ci.Unresolved
	return o
}

func (b *leaseRun) withoutRequest(ci *policy.Crawl, u crawl.Claimed, rules *robots.Rules) (store.FetchOutcome, bool) {
	o := store.FetchOutcome{CrawlID: u.CrawlID, Hash: u.Hash, URL: u.URL, Attempts: u.Attempts}
	b.mu.Lock()
	defer b.mu.Unlock()
	if until := b.res.DeferUntil; !until.IsZero() && b.f.clock().Now().Before(until) {
		o.State, o.NextFetchAt = crawl.URLQueued, until
		b.res.Deferred++
		return o, true
	}
	pu, err := url.Parse(u.URL)
	if err != nil {
		o.State, o.SkipReason = crawl.URLSkipped, "unparseable URL"
		b.res.Skipped++
		return o, true
	}
	if pacing.CrawlDelayOver(rules.CrawlDelay, ci.Spec.MaxCrawlDelay.D()) {
		// The site asks for more time between requests than this crawl waits: skipped,
		// never fetched faster than asked (a crawl with a higher cap still fetches it).
		o.State, o.SkipReason = crawl.URLSkipped, crawl.SkipCrawlDelay
		b.res.Skipped++
		return o, true
	}
	if rules.Allowed(pu.RequestURI()) {
		return o, false
	}
	if why := b.proxyErr[ci.ProxyKey()]; why != "" && rules.DisallowAll() {
		// robots.txt went unasked because the crawl's proxy failed: this URL's request would
		// fail there too. A network error of the URL (counted, dead-lettered at maxAttempts),
		// not a verdict on the host.
		now := b.f.clock().Now()
		o.FetchKey, o.FetchedAt = crawl.FetchKey(u.CrawlID, u.Hash, u.FetchCount, u.Attempts), now
		o.Attempts++
		o.Err = why
		o.State, o.NextFetchAt = retryAfterFailure(ci.Spec, o.Attempts, now, time.Time{})
		b.res.Errors++
		b.res.ConsecutiveErrors++
		b.res.LastError = why
		return o, true
	}
	o.State, o.SkipReason = crawl.URLSkipped, "robots.txt"
	if rules.DisallowAll() { // unreachable robots.txt: wait for it, up to maxAttempts
		o.Attempts++
		o.Err = rules.Reason
		if o.Attempts < ci.Spec.MaxAttempts {
			o.State, o.SkipReason, o.NextFetchAt = crawl.URLQueued, "", b.f.clock().Now().Add(backoff(ci.Spec.RetryBase.D(), o.Attempts))
			b.res.Deferred++
			return o, true
		}
		o.SkipReason = "robots.txt unreachable"
	}
	b.res.Skipped++
	return o, true
}

func (b *leaseRun) endRequest() {
	b.mu.Lock()
	b.inFlight--
	b.mu.Unlock()
}

// endResponse is endRequest for a request whose answer (or failure) is in now.
func (b *leaseRun) endResponse() {
	b.mu.Lock()
	b.inFlight--
	b.respondedLocked()
	b.mu.Unlock()
}

// respondedLocked notes that a request's answer is in: with one request in flight at a time,
// the next leaves a full delay after it, not only a delay after this one's slot. A server that
// saw this request late (a stall on either side, a slow network: the bench's busiest moments
// showed the test web a request 80 ms after it left) still sees the whole delay before the
// next. As Heritrix and Nutch do, a slow server is thereby asked less often. Callers hold b.mu.
func (b *leaseRun) respondedLocked() {
	if b.in.Concurrency <= 1 {
		b.answered = b.f.clock().Now()
		b.delayRaisedLocked()
	}
}

// delayRaisedLocked keeps the next request a whole delay, as it is now, after the last answer
// (respondedLocked, and whenever the delay grows): robots.txt's Crawl-delay (or a crawl's
// pacing) is learnt after a request spaced by the delay before it. robots.txt is a host's first request, often on a new connection, which a
// busy server may see tens of ms after it left; the slot alone (a delay plus a margin after
// it left) let two 2 s hosts of the bench see 1,957 and 1,977 ms. Callers hold b.mu.
func (b *leaseRun) delayRaisedLocked() {
	if !b.answered.IsZero() {
		b.next = clock.Later(b.next, b.answered.Add(b.delay()))
	}
}

// effect is what one request changes in the lease's result.
type effect struct {
	fetched, notModified, errors, skipped int
	failed, succeeded                     bool
	deferUntil                            time.Time
	lastError                             string
	gone                                  string        // "dns" or "front page gone": the host may be dead
	latency                               time.Duration // from the request's start to its answer (0: no answer)
	// stored, when set, returns once the response's body is stored (its segment written):
	// the outcome, which refers to it, is recorded only then.
	stored func(context.Context) error
}

func (b *leaseRun) apply(e effect) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.inFlight--
	b.autoThrottleLocked(e.latency)
	b.respondedLocked()
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
		r.LastError = crawl.ClipError(e.lastError) // in every heartbeat and the lease's result
	case e.succeeded:
		r.ConsecutiveErrors = 0
	}
	if e.deferUntil.After(r.DeferUntil) {
		r.DeferUntil = e.deferUntil
	}
}

func (b *leaseRun) finish(i int) {
	b.mu.Lock()
	b.finished[i] = true
	b.res.Done++
	b.mu.Unlock()
}

// releaseCrawl returns the lease's unfinished URLs of a paused crawl to the queue and finishes
// them in this lease: the crawl's resume claims them again.
func (b *leaseRun) releaseCrawl(ctx context.Context, crawlID string) error {
	var release []crawl.Claimed
	var idx []int
	b.mu.Lock()
	for i, u := range b.urls {
		if u.CrawlID == crawlID && !b.finished[i] {
			release, idx = append(release, u), append(idx, i)
		}
	}
	b.mu.Unlock()
	if len(release) == 0 {
		return nil
	}
	if err := b.f.Frontier.Release(ctx, release); err != nil {
		return err
	}
	for _, i := range idx {
		b.finish(i)
	}
	return nil
}

// drain waits until no request is in flight and every outcome is recorded.
func (b *leaseRun) drain() {
	for i := 0; i < cap(b.sem); i++ {
		b.sem <- struct{}{}
	}
	for i := 0; i < cap(b.sem); i++ {
		<-b.sem
	}
	b.recording.Wait()
}

// fail reports a failure on our side (Postgres, MinIO) to the lease loop, which stops; one is
// enough, later ones are dropped.
func (b *leaseRun) fail(err error) {
	select {
	case b.errs <- err:
	default:
	}
}

// failed is the failure a request of the lease reported, if any.
func (b *leaseRun) failed() error {
	select {
	case err := <-b.errs:
		return err
	default:
		return nil
	}
}

// wait lets the requests in flight finish and returns the result, or err, or else the first
// failure they reported.
func (b *leaseRun) wait(err error) (LeaseResult, error) {
	b.drain()
	if err == nil {
		err = b.failed()
	}
	return b.result(), err
}
