package codec

import (
	"crypto/subtle"
	"net/http"
	"slices"
	"strings"

	"github.com/trawlerdev/trawler/internal/listen"
	"go.temporal.io/sdk/converter"
)

// Handler serves Temporal's remote codec protocol (POST /encode, POST /decode) for the
// Temporal UI (a browser at one of origins, so with CORS) and the `temporal` CLI
// (--codec-endpoint). With a token, a request must carry `Authorization: Bearer <token>`
// (the CLI's --codec-auth; the UI passes its user's access token when told to).
func (c *Codec) Handler(origins []string, token string) http.Handler {
	inner := converter.NewPayloadCodecHTTPHandler(c)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if origin := r.Header.Get("Origin"); origin != "" && slices.Contains(origins, origin) {
			w.Header().Set("Access-Control-Allow-Origin", origin)
			w.Header().Set("Access-Control-Allow-Credentials", "true")
			w.Header().Set("Access-Control-Allow-Methods", "POST, OPTIONS")
			w.Header().Set("Access-Control-Allow-Headers", "Content-Type, X-Namespace, Authorization")
			w.Header().Add("Vary", "Origin")
		}
		if r.Method == http.MethodOptions {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if token == "" && !listen.IsLoopbackHost(r.Host) {
			// Without a token it serves loopback only: a page whose name a DNS answer points
			// at 127.0.0.1 (rebinding) must not decode through the operator's browser.
			http.Error(w, "forbidden: the codec server without a token answers loopback names only", http.StatusForbidden)
			return
		}
		if token != "" {
			scheme, got, _ := strings.Cut(r.Header.Get("Authorization"), " ")
			if !strings.EqualFold(scheme, "Bearer") || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(token)) != 1 {
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
		}
		r.Body = http.MaxBytesReader(w, r.Body, 64<<20) // a history's payloads, not a stream
		inner.ServeHTTP(w, r)
	})
}
