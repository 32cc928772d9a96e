// Package api owns Trawler's HTTP API (`trawler serve`): crawl statistics, URL submission, and
// the analysis of one URL or one host, as JSON under /api/v1/. Errors are JSON too; a bearer
// token guards it when configured.
package api

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/trawlerdev/trawler/internal/admit"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/listen"
	"github.com/trawlerdev/trawler/internal/robots"
	"github.com/trawlerdev/trawler/internal/store"
	"github.com/trawlerdev/trawler/internal/urlnorm"
)

// Server answers the API from Postgres and Temporal.
type Server struct {
	Store     *store.Store
	Temporal  client.Client
	Admission *admit.Service // admits submitted URLs
	Norm      *urlnorm.Normalizer
	IDPrefix  string // workflow ID prefix of this deployment
	TaskQueue string // its workflow task queue, to count its host workflows
	UserAgent string // whose robots.txt rules a URL analysis explains
	Token     string // "" : no authentication
	Log       *slog.Logger
}

// Limits on requests.
const (
	maxBodyBytes  = 4 << 20
	maxSubmitURLs = 10000
	maxCrawlArgs  = 100 // ?crawl= repeated at most this often
)

// Handler routes /api/v1/.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/stats", s.stats)
	mux.HandleFunc("POST /api/v1/urls", s.submit)
	mux.HandleFunc("GET /api/v1/url", s.url)
	mux.HandleFunc("GET /api/v1/host", s.host)
	mux.HandleFunc("GET /api/v1/report", s.report)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "no such endpoint: %s %s (see GET /api/v1/stats, POST /api/v1/urls, GET /api/v1/url, GET /api/v1/host, GET /api/v1/report)", r.Method, r.URL.Path)
	})
	return s.authenticate(mux)
}

// authenticate guards every request. With a token, the Authorization header must carry it
// (scheme "Bearer", any case: RFC 7235). Without one the API serves loopback only (runServe
// refuses anything else), so a request must name a loopback Host: a page in the operator's
// browser that rebinds its own name to 127.0.0.1 is refused. A cross-origin request from a
// browser (an Origin that is not the API's own) is refused either way, and a POST must be JSON,
// so no HTML form can submit URLs.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.Token != "" {
			scheme, got, _ := strings.Cut(r.Header.Get("Authorization"), " ")
			if !strings.EqualFold(scheme, "Bearer") || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(s.Token)) != 1 {
				writeError(w, http.StatusUnauthorized, "missing or wrong bearer token (Authorization: Bearer <TRAWLER_API_TOKEN>)")
				return
			}
		} else if !listen.IsLoopbackHost(r.Host) {
			writeError(w, http.StatusForbidden, "Host %q: without a token the API answers loopback names only", r.Host)
			return
		}
		if o := r.Header.Get("Origin"); o != "" {
			if u, err := url.Parse(o); err != nil || !strings.EqualFold(u.Host, r.Host) {
				writeError(w, http.StatusForbidden, "cross-origin requests are refused (Origin %q)", o)
				return
			}
		}
		if r.Method == http.MethodPost {
			if ct := strings.ToLower(strings.TrimSpace(strings.Split(r.Header.Get("Content-Type"), ";")[0])); ct != "application/json" {
				writeError(w, http.StatusUnsupportedMediaType, "POST bodies must be application/json (got %q)", ct)
				return
			}
		}
		if len(r.URL.Query()["crawl"]) > maxCrawlArgs {
			writeError(w, http.StatusBadRequest, "crawl: at most %d per request", maxCrawlArgs)
			return
		}
		next.ServeHTTP(w, r)
	})
}

type apiError struct {
	Error string `json:"error"`
}

func writeError(w http.ResponseWriter, status int, format string, args ...any) {
	writeJSON(w, status, apiError{Error: fmt.Sprintf(format, args...)})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// fail answers an internal error without its details (a database error names hosts, users and
// databases): they go to the log under an ID the answer gives.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	id := fmt.Sprintf("%x", time.Now().UnixNano())
	s.Log.Error("api request failed", "id", id, "method", r.Method, "path", r.URL.Path, "error", err)
	writeError(w, http.StatusInternalServerError, "internal error; the server's log has it under id %s", id)
}

// Stats is GET /api/v1/stats.
type Stats struct {
	Crawls []crawl.CrawlProgress `json:"crawls"`        // with duplicates, robots refusals and throughput
	Hosts  map[string]int64      `json:"hostWorkflows"` // running host workflows by state: active, idle, backoff, paused
	At     time.Time             `json:"at"`
}

func (s *Server) stats(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	ids := r.URL.Query()["crawl"]
	if len(ids) == 0 {
		var err error
		if ids, err = s.Store.Inspect().CrawlIDs(ctx); err != nil {
			s.fail(w, r, err)
			return
		}
	}
	out := Stats{Crawls: []crawl.CrawlProgress{}, Hosts: map[string]int64{}, At: time.Now().UTC()}
	for _, id := range ids {
		st, err := s.Store.Inspect().CrawlStats(ctx, id, time.Now())
		if errors.Is(err, store.ErrNoCrawl) {
			writeError(w, http.StatusNotFound, "no crawl %q", id)
			return
		}
		if err != nil {
			s.fail(w, r, err)
			return
		}
		out.Crawls = append(out.Crawls, st)
	}
	for _, phase := range crawl.HostPhases {
		n, err := s.countHosts(ctx, phase)
		if err != nil {
			s.Log.Warn("counting host workflows failed", "state", phase, "error", err)
			continue
		}
		out.Hosts[string(phase)] = n
	}
	writeJSON(w, http.StatusOK, out)
}

// countHosts counts this deployment's running host workflows in a state (search attribute).
func (s *Server) countHosts(ctx context.Context, phase crawl.HostPhase) (int64, error) {
	resp, err := s.Temporal.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{Query: crawl.HostsInPhaseQuery(s.TaskQueue, phase)})
	if err != nil {
		return 0, err
	}
	return resp.Count, nil
}

// SubmitRequest is POST /api/v1/urls.
type SubmitRequest struct {
	Crawl string   `json:"crawl"`
	URLs  []string `json:"urls"`
}

func (s *Server) submit(w http.ResponseWriter, r *http.Request) {
	var req SubmitRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "body must be JSON {\"crawl\": NAME, \"urls\": [URL, ...]}: %v", err)
		return
	}
	switch {
	case req.Crawl == "":
		writeError(w, http.StatusBadRequest, "crawl: required")
		return
	case len(req.URLs) == 0:
		writeError(w, http.StatusBadRequest, "urls: at least one URL is required")
		return
	case len(req.URLs) > maxSubmitURLs:
		writeError(w, http.StatusRequestEntityTooLarge, "urls: at most %d per request (got %d)", maxSubmitURLs, len(req.URLs))
		return
	}
	state, err := s.Store.Crawls().CrawlState(r.Context(), req.Crawl)
	if errors.Is(err, store.ErrNoCrawl) {
		writeError(w, http.StatusNotFound, "no crawl %q", req.Crawl)
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if state != crawl.CrawlRunning && state != crawl.CrawlPaused {
		writeError(w, http.StatusConflict, "crawl %q is %s: it takes no more URLs", req.Crawl, state)
		return
	}
	res, err := s.Admission.Submit(r.Context(), req.Crawl, req.URLs)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// URLAnalysis is GET /api/v1/url.
type URLAnalysis struct {
	Input      string             `json:"input"`
	Normalized string             `json:"normalized"`
	Hash       string             `json:"hash"`
	Robots     *RobotsVerdict     `json:"robots,omitempty"`
	Crawls     []*store.URLRecord `json:"crawls"`
}

// RobotsVerdict is what the host's cached robots.txt says of a URL.
type RobotsVerdict struct {
	Allowed   bool       `json:"allowed"`
	Rule      string     `json:"rule"`
	Status    int        `json:"robotsStatus"`
	FetchedAt *time.Time `json:"robotsFetchedAt,omitempty"`
}

func (s *Server) url(w http.ResponseWriter, r *http.Request) {
	raw := r.URL.Query().Get("url")
	if raw == "" {
		writeError(w, http.StatusBadRequest, "url: required, e.g. /api/v1/url?url=http://example.com/")
		return
	}
	if why := crawl.CheckSeed(raw); why != "" {
		writeError(w, http.StatusBadRequest, "url %q: %s", raw, why)
		return
	}
	n, err := s.Norm.Normalize(raw)
	if err != nil {
		writeError(w, http.StatusBadRequest, "url %q: %v", raw, err)
		return
	}
	ctx := r.Context()
	hash := urlnorm.Hash(n)
	out := URLAnalysis{Input: raw, Normalized: n, Hash: fmt.Sprintf("%x", hash), Crawls: []*store.URLRecord{}}
	ids := r.URL.Query()["crawl"]
	if len(ids) == 0 {
		if ids, err = s.Store.Inspect().CrawlsOfURL(ctx, hash); err != nil {
			s.fail(w, r, err)
			return
		}
	}
	for _, id := range ids {
		rec, err := s.Store.Inspect().URLRecordOf(ctx, id, hash)
		if errors.Is(err, store.ErrNoURL) {
			continue
		}
		if err != nil {
			s.fail(w, r, err)
			return
		}
		out.Crawls = append(out.Crawls, rec)
	}
	u, _ := url.Parse(n)
	if rb, err := s.Store.Hosts().HostRobots(ctx, urlnorm.Authority(n), u.Scheme); err == nil && rb != nil && !rb.FetchedAt.IsZero() {
		allowed, why := robots.FromStatus(rb.Status, []byte(rb.Body), robots.ProductToken(s.UserAgent)).Explain(u.RequestURI())
		fetched := rb.FetchedAt
		out.Robots = &RobotsVerdict{Allowed: allowed, Rule: why, Status: rb.Status, FetchedAt: &fetched}
	}
	if len(out.Crawls) == 0 && out.Robots == nil {
		writeJSON(w, http.StatusNotFound, struct {
			apiError
			URLAnalysis
		}{apiError{"no crawl knows this URL"}, out})
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) host(w http.ResponseWriter, r *http.Request) {
	arg := strings.TrimSpace(r.URL.Query().Get("host"))
	if arg == "" {
		writeError(w, http.StatusBadRequest, "host: required, e.g. /api/v1/host?host=example.com")
		return
	}
	host, err := HostKey(s.Norm, arg)
	if err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	out, err := InspectHost(r.Context(), s.Temporal, s.Store, s.IDPrefix, host)
	if errors.Is(err, store.ErrNoHost) {
		writeError(w, http.StatusNotFound, "no crawl has touched host %q", host)
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}
