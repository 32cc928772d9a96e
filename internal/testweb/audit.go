package testweb

import (
	"hash/maphash"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Request is one audited request, as kept in the ring of recent requests.
type Request struct {
	Host        string    `json:"host"`
	Path        string    `json:"path"` // path and query as sent
	Start       time.Time `json:"start"`
	End         time.Time `json:"end"`
	Status      int       `json:"status"`
	Bytes       int64     `json:"bytes"`
	Conditional bool      `json:"conditional,omitempty"`
	Proxied     bool      `json:"proxied,omitempty"` // it came through the test proxy (ProxyVia)
	// Secret: it carried SecretHeader or an Authorization header (a crawl's own, in a test).
	Secret bool `json:"secret,omitempty"`
}

// SecretHeader is a header a test crawl sends as its secret, to see which requests carry it.
const SecretHeader = "X-Test-Secret"

// HostReport is the audit of one host.
type HostReport struct {
	Host                  string         `json:"host"`
	Profile               string         `json:"robotsProfile,omitempty"`
	RequiredDelayMs       int64          `json:"requiredDelayMs"`
	Requests              int            `json:"requests"`
	RobotsRequests        int            `json:"robotsRequests"`
	MinGapMs              float64        `json:"minGapMs"` // -1 with fewer than two requests
	GapViolations         int            `json:"gapViolations"`
	PeakInFlight          int            `json:"peakInFlight"`
	ConcurrencyViolations int            `json:"concurrencyViolations"`
	RobotsFirst           bool           `json:"robotsFirst"`       // the first request was for robots.txt
	PagesBeforeRobots     int            `json:"pagesBeforeRobots"` // requests before any robots.txt request
	Disallowed            int            `json:"disallowed"`        // requests robots.txt forbids
	DisallowedPaths       []string       `json:"disallowedPaths,omitempty"`
	Repeats               int            `json:"repeats"` // 2xx answers for a URL already answered 2xx
	Conditional           int            `json:"conditional"`
	NotModified           int            `json:"notModified"`
	RetryAfterViolations  int            `json:"retryAfterViolations"`
	WrongUserAgent        int            `json:"wrongUserAgent"`
	Status                map[string]int `json:"status"` // by class: 2xx, 3xx, 4xx, 5xx, cut
	Bytes                 int64          `json:"bytes"`
}

// Report is the whole audit.
type Report struct {
	Totals struct {
		Requests              int   `json:"requests"`
		Hosts                 int   `json:"hosts"`
		GapViolations         int   `json:"gapViolations"`
		ConcurrencyViolations int   `json:"concurrencyViolations"`
		RobotsNotFirst        int   `json:"robotsNotFirst"` // hosts whose first request was not robots.txt
		Disallowed            int   `json:"disallowed"`
		Repeats               int   `json:"repeats"`
		NotModified           int   `json:"notModified"`
		RetryAfterViolations  int   `json:"retryAfterViolations"`
		TrapRequests          int   `json:"trapRequests"`
		WrongUserAgent        int   `json:"wrongUserAgent"`
		UnknownHostRequests   int   `json:"unknownHostRequests"`
		UntrackedURLs         int   `json:"untrackedUrls"` // past MaxTrackedURLs, not checked for repeats
		Bytes                 int64 `json:"bytes"`
	} `json:"totals"`
	Hosts []HostReport `json:"hosts"`
}

// Violations sums what a polite crawler must never do.
func (r *Report) Violations() int {
	t := r.Totals
	return t.GapViolations + t.ConcurrencyViolations + t.RobotsNotFirst + t.Disallowed + t.RetryAfterViolations
}

// Host returns the report for host, or nil.
func (r *Report) Host(host string) *HostReport {
	for i := range r.Hosts {
		if r.Hosts[i].Host == host {
			return &r.Hosts[i]
		}
	}
	return nil
}

// hostAudit is the running state of one host: constant size, whatever the request count.
type hostAudit struct {
	HostReport
	site           site
	rules          [2]ruleset // what robots.txt allows over http:// and https://
	required       time.Duration
	lastStart      time.Time
	minGap         time.Duration
	inFlight       int
	robotsSeen     [2]bool // robots.txt was requested over http:// and https:// (RFC 9309 §2.3: a file each)
	retryAfterTill time.Time
	status         [6]int // cut (no status), 1xx..5xx
}

// Audit records every request in bounded memory: per-host aggregates, a fixed-size ring of
// recent requests and a capped set of URL hashes for repeat detection.
type Audit struct {
	w         *Web
	mu        sync.Mutex
	hosts     map[string]*hostAudit
	unknown   int
	trap      int
	urls      map[uint64]uint32
	untracked int
	ring      []Request
	next      int
	full      bool
	seed      maphash.Seed
	token     string
}

func newAudit(w *Web) *Audit {
	a := &Audit{w: w, seed: maphash.MakeSeed(), token: w.cfg.ProductToken}
	a.reset()
	return a
}

// Reset forgets everything recorded.
func (a *Audit) Reset() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.reset()
}

func (a *Audit) reset() {
	a.hosts = map[string]*hostAudit{}
	a.unknown, a.trap, a.untracked = 0, 0, 0
	a.urls = map[uint64]uint32{}
	size := a.w.cfg.RingSize
	if size < 1 {
		size = 1
	}
	a.ring = make([]Request, size)
	a.next, a.full = 0, false
}

type auditToken struct {
	h      *hostAudit
	host   string
	path   string
	url    string
	start  time.Time
	cond   bool
	robot  bool
	proxy  bool
	secret bool
}

func (a *Audit) begin(host string, r *http.Request) auditToken {
	now := time.Now()
	path := r.URL.RequestURI()
	tok := auditToken{host: host, path: path, start: now,
		cond:   r.Header.Get("If-None-Match") != "" || r.Header.Get("If-Modified-Since") != "",
		proxy:  strings.Contains(r.Header.Get("Via"), ProxyVia),
		secret: r.Header.Get(SecretHeader) != "" || r.Header.Get("Authorization") != ""}
	a.mu.Lock()
	defer a.mu.Unlock()
	h := a.hosts[host]
	if h == nil {
		s := a.w.sites[host]
		if s == nil {
			a.unknown++
			return tok
		}
		spec := s.robots()
		h = &hostAudit{HostReport: HostReport{Host: host, Profile: spec.profile, MinGapMs: -1}, site: s,
			rules: [2]ruleset{spec.rules, robotsOf(s, true).rules}, required: a.w.RequiredDelay(host), minGap: -1}
		h.RequiredDelayMs = h.required.Milliseconds()
		a.hosts[host] = h
	}
	tok.h = h
	scheme := 0
	if r.TLS != nil {
		scheme = 1
	}
	spec := robotsOf(h.site, scheme == 1)
	tok.robot = r.URL.Path == "/robots.txt" || (spec.redirect != "" && r.URL.Path == spec.redirect)
	if host == "trap.test" {
		a.trap++
	} else if !tok.robot {
		tok.url = canonicalURL(host, r.URL.EscapedPath(), r.URL.RawQuery)
	}
	tol := a.w.cfg.Tolerance
	if h.Requests > 0 {
		gap := now.Sub(h.lastStart)
		if h.minGap < 0 || gap < h.minGap {
			h.minGap = gap
		}
		if gap < h.required-tol {
			h.GapViolations++
		}
	}
	if now.Before(h.retryAfterTill.Add(-tol)) {
		h.RetryAfterViolations++
	}
	h.lastStart = now
	h.Requests++
	h.inFlight++
	if h.inFlight > h.PeakInFlight {
		h.PeakInFlight = h.inFlight
	}
	if h.inFlight > a.w.cfg.MaxInFlight {
		h.ConcurrencyViolations++
	}
	if tok.robot {
		h.RobotsRequests++
		if h.Requests == 1 {
			h.RobotsFirst = true
		}
		h.robotsSeen[scheme] = true
	} else {
		if !h.robotsSeen[scheme] {
			h.PagesBeforeRobots++
		}
		if !h.rules[scheme].allowed(rulePath(r.URL.EscapedPath(), r.URL.RawQuery)) {
			h.Disallowed++
			if len(h.DisallowedPaths) < 20 {
				h.DisallowedPaths = append(h.DisallowedPaths, path)
			}
		}
	}
	if tok.cond {
		h.Conditional++
	}
	if ua := strings.ToLower(r.UserAgent()); !strings.Contains(ua, a.token) {
		h.WrongUserAgent++
	}
	return tok
}

func (a *Audit) end(tok auditToken, rec *recorder) {
	now := time.Now()
	status := rec.status
	if rec.cut || (!rec.wrote && rec.bytes == 0) {
		status = 0 // cut short, or the client went away before an answer
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.ring[a.next] = Request{Host: tok.host, Path: tok.path, Start: tok.start, End: now, Status: status,
		Bytes: rec.bytes, Conditional: tok.cond, Proxied: tok.proxy, Secret: tok.secret}
	a.next++
	if a.next == len(a.ring) {
		a.next, a.full = 0, true
	}
	h := tok.h
	if h == nil {
		return
	}
	h.inFlight--
	h.Bytes += rec.bytes
	h.status[status/100]++
	if status == http.StatusNotModified {
		h.NotModified++
	}
	if (status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable) && rec.retryAfter != "" {
		if d, ok := parseRetryAfter(rec.retryAfter, now); ok && now.Add(d).After(h.retryAfterTill) {
			h.retryAfterTill = now.Add(d)
		}
	}
	if status >= 200 && status < 300 && tok.url != "" {
		k := maphash.String(a.seed, tok.url)
		n, tracked := a.urls[k]
		switch {
		case tracked:
			a.urls[k] = n + 1
			h.Repeats++
		case len(a.urls) < a.w.cfg.MaxTrackedURLs:
			a.urls[k] = 1
		default:
			a.untracked++
		}
	}
}

// parseRetryAfter reads delta-seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	if s, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && s >= 0 {
		return time.Duration(s) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return t.Sub(now), true
	}
	return 0, false
}

// Report summarises everything recorded so far.
func (a *Audit) Report() *Report {
	a.mu.Lock()
	defer a.mu.Unlock()
	rep := &Report{}
	t := &rep.Totals
	t.UnknownHostRequests, t.TrapRequests, t.UntrackedURLs = a.unknown, a.trap, a.untracked
	for _, h := range a.hosts {
		hr := h.HostReport
		hr.DisallowedPaths = append([]string(nil), h.DisallowedPaths...)
		if h.minGap >= 0 {
			hr.MinGapMs = float64(h.minGap.Microseconds()) / 1000
		}
		hr.Status = map[string]int{}
		for i, n := range h.status {
			if n > 0 {
				key := "cut"
				if i > 0 {
					key = strconv.Itoa(i) + "xx"
				}
				hr.Status[key] = n
			}
		}
		rep.Hosts = append(rep.Hosts, hr)
		t.Requests += hr.Requests
		t.GapViolations += hr.GapViolations
		t.ConcurrencyViolations += hr.ConcurrencyViolations
		if !hr.RobotsFirst {
			t.RobotsNotFirst++
		}
		t.Disallowed += hr.Disallowed
		t.Repeats += hr.Repeats
		t.NotModified += hr.NotModified
		t.RetryAfterViolations += hr.RetryAfterViolations
		t.WrongUserAgent += hr.WrongUserAgent
		t.Bytes += hr.Bytes
	}
	t.Requests += a.unknown
	t.Hosts = len(rep.Hosts)
	sort.Slice(rep.Hosts, func(i, j int) bool { return rep.Hosts[i].Host < rep.Hosts[j].Host })
	return rep
}

// Requests returns the recent requests (at most RingSize) to host, or to every host if host
// is "", oldest first.
func (a *Audit) Requests(host string) []Request {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []Request
	visit := func(r Request) {
		if host == "" || r.Host == host {
			out = append(out, r)
		}
	}
	if a.full {
		for _, r := range a.ring[a.next:] {
			visit(r)
		}
	}
	for _, r := range a.ring[:a.next] {
		visit(r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Start.Before(out[j].Start) })
	return out
}
