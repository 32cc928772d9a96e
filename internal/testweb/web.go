package testweb

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sort"
	"strings"
	"time"
)

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

// site is one virtual host.
type site interface {
	robots() robotsSpec
	// serve answers every request but robots.txt.
	serve(w http.ResponseWriter, r *http.Request)
	// page tells the truth computation what path holds.
	page(path, query string) pageInfo
	// sitemapPages lists the URLs the host's sitemaps announce.
	sitemapPages() []string
}

// schemeRobots is a site whose https:// robots.txt differs from its http:// one.
type schemeRobots interface {
	robotsFor(secure bool) robotsSpec
}

// robotsOf is the robots.txt a site answers over http:// (secure false) or https://.
func robotsOf(s site, secure bool) robotsSpec {
	if sr, ok := s.(schemeRobots); ok {
		return sr.robotsFor(secure)
	}
	return s.robots()
}

// robotsSpec is what a host answers for /robots.txt and what a compliant crawler must apply.
type robotsSpec struct {
	profile  string
	status   int
	body     string
	redirect string        // path /robots.txt redirects to; the body is served there
	slow     time.Duration // delay before answering
	rules    ruleset
}

type pageKind int

const (
	pageNone     pageKind = iota // 404
	pageOK                       // 200 HTML a crawler should fetch and store
	pageRedirect                 // 3xx to links[0]
	pageDead                     // fails forever (5xx)
	pageOther                    // served, but outside the truth (traps, hostile responses)
)

type pageInfo struct {
	kind  pageKind
	links []string // absolute URLs a compliant crawler follows from it
}

// Web is the synthetic web: an http.Handler over all virtual hosts plus its audit.
type Web struct {
	cfg   Config
	sites map[string]site
	names []string
	audit *Audit
	epoch time.Time
}

// New builds the web described by cfg.
func New(cfg Config) (*Web, error) {
	if cfg.Hosts < 1 || (cfg.Pages < 2 && !cfg.LongTail) {
		return nil, errors.New("testweb: want at least 1 host and 2 pages per host")
	}
	if cfg.ProductToken == "" {
		cfg.ProductToken = "trawlerbot"
	}
	cfg.ProductToken = strings.ToLower(cfg.ProductToken)
	if cfg.MaxInFlight < 1 {
		cfg.MaxInFlight = 1
	}
	w := &Web{cfg: cfg, sites: map[string]site{}, epoch: time.Now()}
	for i := 0; i < cfg.Hosts; i++ {
		g := &generic{w: w, idx: i, name: w.HostName(i)}
		g.spec = g.buildRobots()
		w.sites[g.name] = g
	}
	if cfg.Specials {
		for _, s := range newSpecials(w) {
			w.sites[s.host()] = s
		}
	}
	if cfg.Bytes {
		for _, s := range []special{&bytesSite{w: w}, &movedSite{w: w}} {
			w.sites[s.host()] = s
		}
	}
	if cfg.Signals {
		s := &signalsSite{w: w}
		w.sites[s.host()] = s
	}
	if cfg.Formats {
		s := &formatsSite{w: w}
		w.sites[s.host()] = s
	}
	if cfg.GreedyDelay {
		w.sites["slowpoke.test"] = &slowpokeSite{w: w}
		w.sites["patient.test"] = &patientSite{w: w}
	}
	if cfg.Sluggish {
		s := &sluggishSite{w: w}
		w.sites[s.host()] = s
	}
	if cfg.Cookies {
		s := &cookieSite{w: w}
		w.sites[s.host()] = s
	}
	if cfg.Shop {
		s := &shopSite{w: w}
		w.sites[s.host()] = s
	}
	if cfg.DocsDir != "" {
		s := &docsSite{w: w, files: http.FileServer(http.Dir(cfg.DocsDir))}
		w.sites[s.host()] = s
	}
	if cfg.Requisites {
		for _, s := range []special{&styleSite{w: w}, &cdnSite{w: w}} {
			w.sites[s.host()] = s
		}
	}
	if cfg.Scripts {
		for _, s := range []special{&scriptsSite{w: w}, &trackerSite{w: w}, &hostileRenderSite{w: w}} {
			w.sites[s.host()] = s
		}
	}
	for n := range w.sites {
		w.names = append(w.names, n)
	}
	sort.Strings(w.names)
	w.audit = newAudit(w)
	return w, nil
}

// Config returns the web's configuration.
func (w *Web) Config() Config { return w.cfg }

// HostName names generic host i.
func (w *Web) HostName(i int) string {
	width := len(fmt.Sprint(w.cfg.Hosts - 1))
	if width < 4 {
		width = 4
	}
	return fmt.Sprintf("h%0*d.test", width, i)
}

// Hosts lists every virtual host, sorted.
func (w *Web) Hosts() []string { return append([]string(nil), w.names...) }

// Seeds is the default seed list: the first generic host's front page (everything is
// reachable from it).
func (w *Web) Seeds() []string {
	if w.cfg.SeedEvery <= 0 {
		return []string{"http://" + w.HostName(0) + "/"}
	}
	var out []string
	for h := 0; h < w.cfg.Hosts; h += w.cfg.SeedEvery {
		out = append(out, "http://"+w.HostName(h)+"/")
	}
	return out
}

// pagesOf is how many pages generic host h has.
func (w *Web) pagesOf(h int) int {
	if !w.cfg.LongTail {
		return w.cfg.Pages
	}
	r := rng(w.cfg.Seed, uint64(h), 1<<40)
	switch p := r.IntN(100); {
	case p < 70:
		return 1 + r.IntN(5)
	case p < 95:
		return 6 + r.IntN(195)
	default:
		return 1000 + r.IntN(1001)
	}
}

// Audit returns the request audit.
func (w *Web) Audit() *Audit { return w.audit }

// RequiredDelay is the minimum gap between request starts a polite crawler keeps on host.
func (w *Web) RequiredDelay(host string) time.Duration {
	if s := w.sites[host]; s != nil {
		if d := s.robots().rules.crawlDelay; d > 0 {
			return d
		}
	}
	return w.cfg.DefaultDelay
}

// ServeHTTP routes by the Host header, answers robots.txt itself and audits every request.
func (w *Web) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	host := hostOnly(r.Host)
	if host == ControlHost {
		w.serveControl(rw, r)
		return
	}
	rec := &recorder{ResponseWriter: rw, status: http.StatusOK}
	tok := w.audit.begin(host, r)
	defer func() {
		if r.Context().Err() != nil {
			rec.cut = true // the client went away before the answer was complete
		}
		w.audit.end(tok, rec)
	}()
	s := w.sites[host]
	if s == nil {
		http.Error(rec, "no such host in the test web", http.StatusNotFound)
		return
	}
	spec := robotsOf(s, r.TLS != nil)
	if r.URL.Path == "/robots.txt" || (spec.redirect != "" && r.URL.Path == spec.redirect) {
		w.serveRobots(rec, r, spec)
		return
	}
	s.serve(rec, r)
}

func (w *Web) serveRobots(rw http.ResponseWriter, r *http.Request, spec robotsSpec) {
	if spec.slow > 0 {
		select {
		case <-time.After(spec.slow):
		case <-r.Context().Done():
			return
		}
	}
	if spec.redirect != "" && r.URL.Path == "/robots.txt" {
		http.Redirect(rw, r, spec.redirect, http.StatusMovedPermanently)
		return
	}
	rw.Header().Set("Content-Type", "text/plain; charset=utf-8")
	rw.WriteHeader(spec.status)
	_, _ = rw.Write([]byte(spec.body))
}

func hostOnly(hostport string) string {
	h := strings.ToLower(hostport)
	if host, _, err := net.SplitHostPort(h); err == nil {
		return host
	}
	return strings.TrimSuffix(h, ".")
}

// recorder captures what a handler answered, for the audit.
type recorder struct {
	http.ResponseWriter
	status     int
	bytes      int64
	retryAfter string
	wrote      bool
	cut        bool // the response did not complete (write error, reset, client gone)
}

func (r *recorder) WriteHeader(code int) {
	if !r.wrote {
		r.status, r.wrote = code, true
		r.retryAfter = r.Header().Get("Retry-After")
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(p []byte) (int, error) {
	if !r.wrote {
		r.WriteHeader(http.StatusOK)
	}
	n, err := r.ResponseWriter.Write(p)
	r.bytes += int64(n)
	if err != nil {
		r.cut = true
	}
	return n, err
}

// Hijack hands the connection over (hostile.test resets it): the response is cut.
func (r *recorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	r.cut = true
	return http.NewResponseController(r.ResponseWriter).Hijack()
}

func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection (for hijacking resets).
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// Server is a running test web.
type Server struct {
	Web  *Web
	Addr string // host:port it listens on, for http:// and https:// alike
	srv  *http.Server
	tls  *http.Server
	ca   *authority
	ln   net.Listener
}

// Start serves web on addr (use "127.0.0.1:0" for a free port). Only loopback addresses are
// accepted: the test web is never exposed.
func Start(web *Web, addr string) (*Server, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("testweb: address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("testweb: refusing to listen on %q: loopback only", addr)
	}
	ca, err := newAuthority()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("testweb: listen: %w", err)
	}
	split := newSplitListener(ln, &tls.Config{GetCertificate: ca.leaf, NextProtos: []string{"http/1.1"}})
	s := &Server{Web: web, Addr: ln.Addr().String(), ca: ca, ln: ln,
		srv: &http.Server{Handler: web, ReadHeaderTimeout: 10 * time.Second},
		tls: &http.Server{Handler: web, ReadHeaderTimeout: 10 * time.Second}}
	go func() { _ = s.srv.Serve(split.plain) }()
	go func() { _ = s.tls.Serve(split.tls) }()
	return s, nil
}

// CAPEM is the certificate (PEM) of the authority that signs the server's https:// answers:
// the crawler's TRAWLER_CA_FILE.
func (s *Server) CAPEM() []byte { return s.ca.pem }

// ConnectTo is the crawler's TRAWLER_CONNECT_TO value that reaches this server.
func (s *Server) ConnectTo() string { return "*.test=" + s.Addr }

// Close stops the server, cutting slow responses short.
func (s *Server) Close() error {
	_ = s.ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	var errs []error
	for _, srv := range []*http.Server{s.srv, s.tls} {
		if err := srv.Shutdown(ctx); err != nil {
			errs = append(errs, srv.Close())
		}
	}
	return errors.Join(errs...)
}
