package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// The guard in front of every endpoint, without a store behind it: what it refuses never
// reaches a handler.
func TestGuardRefusesWhatABrowserOrAStrangerCouldSend(t *testing.T) {
	reached := 0
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached++ })
	open := (&Server{}).authenticate(next)
	tokened := (&Server{Token: "s3cret"}).authenticate(next)
	many := "/api/v1/stats?" + strings.Repeat("crawl=a&", maxCrawlArgs+1)
	for _, tc := range []struct {
		name    string
		h       http.Handler
		method  string
		target  string
		headers map[string]string
		want    int
	}{
		{"loopback, no token", open, "GET", "http://127.0.0.1:8080/api/v1/stats", nil, 200},
		{"localhost, no token", open, "GET", "http://localhost:8080/api/v1/stats", nil, 200},
		{"a rebound name, no token", open, "GET", "http://evil.example:8080/api/v1/stats", nil, 403},
		{"cross-origin", open, "GET", "http://127.0.0.1:8080/api/v1/stats", map[string]string{"Origin": "http://evil.example"}, 403},
		{"same origin", open, "GET", "http://127.0.0.1:8080/api/v1/stats", map[string]string{"Origin": "http://127.0.0.1:8080"}, 200},
		{"a form post", open, "POST", "http://127.0.0.1:8080/api/v1/urls", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, 415},
		{"a JSON post", open, "POST", "http://127.0.0.1:8080/api/v1/urls", map[string]string{"Content-Type": "application/json; charset=utf-8"}, 200},
		{"crawl repeated past the bound", open, "GET", "http://127.0.0.1:8080" + many, nil, 400},
		{"token, lower-case scheme", tokened, "GET", "http://api.example/api/v1/stats", map[string]string{"Authorization": "bearer s3cret"}, 200},
		{"token, wrong", tokened, "GET", "http://api.example/api/v1/stats", map[string]string{"Authorization": "Bearer nope"}, 401},
		{"token, missing", tokened, "GET", "http://api.example/api/v1/stats", nil, 401},
	} {
		reached = 0
		r := httptest.NewRequest(tc.method, tc.target, bytes.NewReader(nil))
		for k, v := range tc.headers {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		tc.h.ServeHTTP(w, r)
		if w.Code != tc.want || (tc.want == 200) != (reached == 1) {
			t.Errorf("%s: %d (handler reached %d times), want %d: %s", tc.name, w.Code, reached, tc.want, w.Body)
		}
	}
}

func TestInternalErrorsAreNotEchoed(t *testing.T) {
	s := &Server{Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	w := httptest.NewRecorder()
	s.fail(w, httptest.NewRequest("GET", "/api/v1/stats", nil), errors.New("failed to connect to host=db.internal user=trawler database=prod"))
	if w.Code != 500 || strings.Contains(w.Body.String(), "db.internal") || !strings.Contains(w.Body.String(), "id") {
		t.Errorf("500 answer: %d %s", w.Code, w.Body)
	}
}

// Any request reaches the handler or gets a JSON refusal, quickly, and a request without the
// token never reaches a token-guarded handler.
func FuzzGuard(f *testing.F) {
	f.Add("GET", "127.0.0.1:8080", "/api/v1/stats?crawl=a", "", "", "")
	f.Add("POST", "evil.example", "/api/v1/urls", "http://x", "text/plain", "bearer s3cret")
	f.Fuzz(func(t *testing.T, method, host, target, origin, ctype, auth string) {
		if !strings.HasPrefix(target, "/") {
			target = "/" + target
		}
		r, err := http.NewRequest(method, "http://placeholder"+target, nil)
		if err != nil {
			return
		}
		r.Host = host
		r.Header.Set("Origin", origin)
		r.Header.Set("Content-Type", ctype)
		r.Header.Set("Authorization", auth)
		for _, s := range []*Server{{}, {Token: "s3cret"}} {
			reached := false
			w := httptest.NewRecorder()
			start := time.Now()
			s.authenticate(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached = true })).ServeHTTP(w, r)
			if time.Since(start) > 250*time.Millisecond {
				t.Fatal("slow")
			}
			if !reached && (w.Code < 400 || !json.Valid(w.Body.Bytes())) {
				t.Fatalf("refusal %d %q", w.Code, w.Body)
			}
			if reached && s.Token != "" && !strings.Contains(strings.ToLower(auth), "s3cret") {
				t.Fatalf("reached without the token (Authorization %q)", auth)
			}
		}
	})
}
