package fetch

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"

	"github.com/trawlerdev/trawler/internal/config"
	"github.com/trawlerdev/trawler/internal/netguard"
)

// Every Content-Encoding the client asks for is decoded: gzip, br, and deflate both as HTTP
// defines it (zlib, RFC 9110 §8.4.1.2) and as many servers send it (raw); each under the same
// size cap, so a bomb in any of them is cut; an encoding it did not ask for is an error.
func TestContentEncodingsAreDecoded(t *testing.T) {
	page := []byte("<html><body>" + strings.Repeat("<p>decoded text</p>", 200) + "</body></html>")
	bomb := bytes.Repeat([]byte{'a'}, 32<<20)
	encode := func(enc string, b []byte) []byte {
		var buf bytes.Buffer
		var w io.WriteCloser
		switch enc {
		case "gzip":
			w = gzip.NewWriter(&buf)
		case "br":
			w = brotli.NewWriter(&buf)
		case "zlib":
			w = zlib.NewWriter(&buf)
		case "raw":
			w, _ = flate.NewWriter(&buf, flate.BestCompression)
		default:
			return b
		}
		_, _ = w.Write(b)
		_ = w.Close()
		return buf.Bytes()
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		enc := strings.TrimPrefix(r.URL.Path, "/")
		body := page
		if strings.HasSuffix(enc, "-bomb") {
			enc, body = strings.TrimSuffix(enc, "-bomb"), bomb
		}
		header := map[string]string{"zlib": "deflate", "raw": "deflate"}[enc]
		if header == "" {
			header = enc
		}
		w.Header().Set("Content-Encoding", header)
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write(encode(enc, body))
	}))
	defer srv.Close()
	rules, err := config.ParseConnectTo("enc.test=" + srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c := New(Options{Dialer: netguard.New(netguard.Options{ConnectTo: rules})})
	get := func(path string, max int64) (*Response, error) {
		return c.Get(context.Background(), Request{URL: "http://enc.test/" + path, UserAgent: "TrawlerBot/test", MaxBytes: max})
	}
	for _, enc := range []string{"gzip", "br", "zlib", "raw"} {
		r, err := get(enc, 1<<20)
		if err != nil || !bytes.Equal(r.Body, page) || r.Truncated {
			t.Errorf("%s: %v, %d bytes (want %d), truncated %v", enc, err, len(r.Body), len(page), r != nil && r.Truncated)
		}
		r, err = get(enc+"-bomb", 1<<20)
		if err != nil || !r.Truncated || len(r.Body) != 1<<20 {
			t.Errorf("%s bomb: %v, %d bytes, truncated %v", enc, err, len(r.Body), r != nil && r.Truncated)
		}
	}
	if _, err := get("compress", 1<<20); err == nil || !strings.Contains(err.Error(), "unsupported Content-Encoding") {
		t.Errorf("an encoding not asked for: %v", err)
	}
}
