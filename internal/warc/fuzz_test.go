package warc

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"io"
	"net/textproto"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Whatever head and payload a server sent and whatever URL, a response record reads back as
// one gzip member whose WARC headers give the block's exact length and digest, and its CDXJ
// index line is one line.
func FuzzResponseRecord(f *testing.F) {
	f.Add("http://a.test/?b=1&a=2", "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nX-Note: caf\xe9\r\n\r\n", []byte("abc"))
	f.Add("http://a.test/\n x", "HTTP/1.1 200 OK\r\n\r\n", []byte{0, 1, 2})
	f.Fuzz(func(t *testing.T, uri, head string, payload []byte) {
		start := time.Now()
		block := HTTPResponseBlock(head, payload, true)
		rec := Record{Type: TypeResponse, ID: RecordID(uri), Date: time.Unix(1e9, 0), TargetURI: uri, ContentType: "application/http; msgtype=response", Block: block}
		var buf bytes.Buffer
		n, err := rec.Marshal(&buf)
		if err != nil || n != int64(buf.Len()) {
			t.Fatalf("marshal: %d of %d bytes, %v", n, buf.Len(), err)
		}
		zr, err := gzip.NewReader(&buf)
		if err != nil {
			t.Fatal(err)
		}
		zr.Multistream(false)
		raw, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(bytes.NewReader(raw))
		if line, _ := br.ReadString('\n'); line != "WARC/1.1\r\n" {
			t.Fatalf("version line %q", line)
		}
		h, err := textproto.NewReader(br).ReadMIMEHeader()
		if err != nil {
			t.Fatalf("WARC headers unreadable: %v", err)
		}
		length, _ := strconv.Atoi(h.Get("Content-Length"))
		got, _ := io.ReadAll(br)
		if length != len(block) || !bytes.Equal(got, append(append([]byte(nil), block...), "\r\n\r\n"...)) {
			t.Fatalf("block of %d bytes read back as %d (header %d)", len(block), len(got), length)
		}
		if h.Get("Warc-Block-Digest") != Digest(block) {
			t.Fatal("block digest does not match")
		}
		line := CDXEntry{URL: uri, Time: rec.Date, Mime: "text/html", Status: 200, Digest: Digest(payload), Filename: "f.warc.gz", Length: n}.Line()
		if strings.ContainsAny(line, "\r\n") {
			t.Fatalf("CDXJ line spans lines: %q", line)
		}
		if d := time.Since(start); d > 250*time.Millisecond+time.Duration(len(head)+len(payload))*time.Microsecond {
			t.Fatalf("%d bytes took %v", len(head)+len(payload), d)
		}
	})
}
