package testweb

import (
	"bufio"
	"net"
	"net/http"
	"strings"
	"time"
)

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
