package testweb

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// hostileSite (hostile.test) answers in ways that break careless crawlers. Everything is
// streamed: the server never holds a large body in memory. Outside the truth.
type hostileSite struct {
	w        *Web
	bombOnce sync.Once
	bomb     []byte
}

// Sizes of the hostile responses.
const (
	LargePageBytes = 25 << 20 // /large
	BombBytes      = 1 << 30  // /bomb, decompressed
	DripInterval   = 100 * time.Millisecond
	DripMax        = 10 * time.Minute
)

var hostileLinks = []string{"/slow", "/drip", "/large", "/bomb", "/reset", "/binary", "/many-headers", "/malformed"}

func (s *hostileSite) host() string                 { return "hostile.test" }
func (s *hostileSite) robots() robotsSpec           { return allowAll }
func (s *hostileSite) sitemapPages() []string       { return nil }
func (s *hostileSite) page(string, string) pageInfo { return pageInfo{kind: pageOther} }

func (s *hostileSite) serve(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/":
		listPage(w, "hostile responses", hostileLinks...)
	case "/slow":
		select {
		case <-time.After(5 * time.Second):
			listPage(w, "slow page", "/")
		case <-r.Context().Done():
		}
	case "/drip":
		s.drip(w, r)
	case "/large":
		s.large(w)
	case "/bomb":
		s.serveBomb(w)
	case "/reset":
		s.reset(w)
	case "/binary":
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		r := rng(s.w.cfg.Seed, 0xb1)
		buf := make([]byte, 64<<10)
		for i := range buf {
			buf[i] = byte(r.Uint32())
		}
		_, _ = w.Write(buf)
	case "/many-headers":
		pad := strings.Repeat("x", 200)
		for i := 0; i < 1000; i++ {
			w.Header().Set(fmt.Sprintf("X-Pad-%d", i), pad)
		}
		listPage(w, "many headers", "/")
	case "/mega":
		// Megabyte strings between ordinary pages: a status line and an ETag.
		listPage(w, "megabyte strings", "/mega-status", "/mega-etag", "/mega-ok/1", "/mega-ok/2")
	case "/mega-status":
		s.megaStatus(w)
	case "/mega-etag":
		w.Header().Set("ETag", `"`+strings.Repeat("e", MegaStringBytes)+`"`)
		w.Header().Set("Last-Modified", strings.Repeat("m", 100<<10)) // both within the client's 1 MiB of headers
		listPage(w, "a page with a megabyte ETag")
	case "/mega-ok/1", "/mega-ok/2":
		listPage(w, "an ordinary page, "+r.URL.Path)
	case "/malformed":
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, `<html><head><title>broken<body><p>unclosed <b><i>nest</b></i>
<a href="/">home<a href="/malformed?x=1"><div><table><tr><td>cell<p>para</table>
<script>document.write("<a href='/never'>")</script><a href=/slow>slow</a><!-- unterminated comment`)
	default:
		http.NotFound(w, r)
	}
}

func (s *hostileSite) drip(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	t := time.NewTicker(DripInterval)
	defer t.Stop()
	deadline := time.After(DripMax)
	rc := http.NewResponseController(w)
	_, _ = io.WriteString(w, "<html><body><p>")
	for {
		select {
		case <-t.C:
			if _, err := w.Write([]byte("z")); err != nil {
				return
			}
			_ = rc.Flush()
		case <-deadline:
			return
		case <-r.Context().Done():
			return
		}
	}
}

func (s *hostileSite) large(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Length", fmt.Sprint(LargePageBytes))
	chunk := []byte(strings.Repeat("<p>large large large large large large large large large large</p>\n", 1024))
	head := []byte("<html><body>\n")
	_, _ = w.Write(head)
	left := int64(LargePageBytes - len(head))
	for left > 0 {
		n := int64(len(chunk))
		if n > left {
			n = left
		}
		if _, err := w.Write(chunk[:n]); err != nil {
			return
		}
		left -= n
	}
}

// serveBomb sends 1 GiB of HTML-ish zeros in about 1 MB of gzip, Content-Encoding: gzip.
func (s *hostileSite) serveBomb(w http.ResponseWriter) {
	// A gzip file may hold several members, decoded as one stream: one compressed MiB of
	// zeros repeated makes the GiB in milliseconds, so the first request does not wait for a
	// GiB to be compressed (which the audit would count as a request in flight).
	s.bombOnce.Do(func() {
		var head, mib bytes.Buffer
		zw := gzip.NewWriter(&head)
		_, _ = zw.Write([]byte("<html><body>"))
		_ = zw.Close()
		zw, _ = gzip.NewWriterLevel(&mib, gzip.BestCompression)
		_, _ = zw.Write(make([]byte, 1<<20))
		_ = zw.Close()
		s.bomb = append(head.Bytes(), bytes.Repeat(mib.Bytes(), BombBytes>>20)...)
	})
	w.Header().Set("Content-Type", "text/html")
	w.Header().Set("Content-Encoding", "gzip")
	w.Header().Set("Content-Length", fmt.Sprint(len(s.bomb)))
	_, _ = w.Write(s.bomb)
}

// MegaStringBytes is the size of /mega-status's status line and /mega-etag's validators.
const MegaStringBytes = 900 << 10

// megaStatus answers with a 900 KiB status line of control bytes where the status code should
// be, which Go's client quotes whole (four times longer) into its error.
func (s *hostileSite) megaStatus(w http.ResponseWriter) {
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	_, _ = buf.WriteString("HTTP/1.1 " + strings.Repeat("\x01\x02", MegaStringBytes/2) + "\r\nContent-Length: 0\r\n\r\n")
	_ = buf.Flush()
}

// reset sends the headers and part of the body, then resets the connection.
func (s *hostileSite) reset(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Length", "100000")
	_, _ = io.WriteString(w, "<html><body><p>"+strings.Repeat("cut short ", 200))
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	conn, _, err := rc.Hijack()
	if err != nil {
		return
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0) // RST instead of FIN
	}
	_ = conn.Close()
}
