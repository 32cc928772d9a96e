package api

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/trawlerdev/trawler/internal/report"
	"github.com/trawlerdev/trawler/internal/store"
)

// reportCSP lets only the report's own script and style elements (those carrying this
// response's nonce) run, and nothing load: the page shows hosts and URLs from crawled pages,
// and must not become a way to run theirs, even if an escape failed.
func reportCSP(nonce string) string {
	return "default-src 'none'; script-src 'nonce-" + nonce + "'; style-src 'nonce-" + nonce + "'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
}

// report serves a crawl's report: the HTML page, or with format=json its figures.
func (s *Server) report(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimSpace(r.URL.Query().Get("crawl"))
	if name == "" {
		writeError(w, http.StatusBadRequest, "crawl: required, e.g. /api/v1/report?crawl=NAME (&format=json for the figures)")
		return
	}
	format := r.URL.Query().Get("format")
	if format != "" && format != "html" && format != "json" {
		writeError(w, http.StatusBadRequest, "format: %q is not html or json", format)
		return
	}
	figures, err := s.Store.Inspect().CrawlFigures(r.Context(), name)
	if errors.Is(err, store.ErrNoCrawl) {
		writeError(w, http.StatusNotFound, "no crawl %q", name)
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	rep := report.New(figures, time.Now())
	var nonce [16]byte
	_, _ = rand.Read(nonce[:])
	n := base64.RawURLEncoding.EncodeToString(nonce[:])
	var body bytes.Buffer
	write, ctype := func(w io.Writer) error { return rep.HTMLWithNonce(w, n) }, "text/html; charset=utf-8"
	if format == "json" {
		write, ctype = rep.JSON, "application/json"
	}
	if err := write(&body); err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Content-Security-Policy", reportCSP(n))
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(body.Bytes())
}
