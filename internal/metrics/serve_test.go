package metrics

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

// Profiles are served only when asked for; metrics always.
func TestServeProfilesOnlyWhenEnabled(t *testing.T) {
	for _, profiles := range []bool{false, true} {
		reg, err := New()
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		addr, err := reg.Serve(ctx, "127.0.0.1:0", profiles)
		if err != nil {
			t.Fatal(err)
		}
		get := func(path string) (int, string) {
			resp, err := http.Get("http://" + addr + path)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(body)
		}
		if code, body := get("/metrics"); code != http.StatusOK || !strings.Contains(body, "go_goroutines") {
			t.Errorf("profiles %v: /metrics %d", profiles, code)
		}
		code, body := get("/debug/pprof/")
		if profiles && (code != http.StatusOK || !strings.Contains(body, "goroutine")) {
			t.Errorf("profiles on: /debug/pprof/ %d", code)
		}
		if !profiles && code != http.StatusNotFound {
			t.Errorf("profiles off: /debug/pprof/ %d, want 404", code)
		}
		cancel()
		_ = reg.Close()
	}
}
