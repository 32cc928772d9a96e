package warc_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/testenv"
	"github.com/trawlerdev/trawler/internal/warc"
)

func TestSURT(t *testing.T) {
	for in, want := range map[string]string{
		"http://www.Example.com:80/a/B?z=1&a=2": "com,example)/a/b?a=2&z=1",
		"https://sub.example.org:8443/":         "org,example,sub:8443)/",
		"http://h0001.test":                     "test,h0001)/",
	} {
		if got := warc.SURT(in); got != want {
			t.Errorf("SURT(%q) = %q, want %q", in, got, want)
		}
	}
}

// The records we write must read back in a WARC reader that is not ours, with the digests we
// claim, at the offsets our CDXJ lines give.
func TestIndependentReaderReadsOurRecords(t *testing.T) {
	dir := t.TempDir()
	at := time.Date(2026, 11, 22, 10, 0, 0, 123456000, time.UTC)
	w, err := warc.Create(dir, "test.warc.gz", "Trawler test", at)
	if err != nil {
		t.Fatal(err)
	}
	body := []byte("<html><title>hello</title>gzip-decoded body</html>")
	head := "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 31\r\nContent-Type: text/html\r\nEtag: \"v1\"\r\n\r\n"
	respID := warc.RecordID("k/response")
	var lines []string
	add := func(r warc.Record) {
		off, n, err := w.Add(r)
		if err != nil {
			t.Fatal(err)
		}
		if r.Type == warc.TypeResponse || r.Type == warc.TypeRevisit {
			lines = append(lines, warc.CDXEntry{URL: r.TargetURI, Time: r.Date, Mime: "text/html", Status: 200,
				Digest: r.PayloadDigest, Filename: "test.warc.gz", Offset: off, Length: n, Revisit: r.Type == warc.TypeRevisit}.Line())
		}
	}
	add(warc.Record{Type: warc.TypeRequest, ID: warc.RecordID("k/request"), Date: at, TargetURI: "http://a.test/p",
		ContentType: "application/http;msgtype=request", ConcurrentTo: respID,
		Block: []byte("GET /p HTTP/1.1\r\nHost: a.test\r\nUser-Agent: TrawlerBot\r\n\r\n")})
	add(warc.Record{Type: warc.TypeResponse, ID: respID, Date: at, TargetURI: "http://a.test/p",
		ContentType: "application/http;msgtype=response", PayloadDigest: warc.Digest(body),
		Block: warc.HTTPResponseBlock(head, body, true)})
	add(warc.Record{Type: warc.TypeRevisit, ID: warc.RecordID("k2/response"), Date: at.Add(time.Hour), TargetURI: "http://a.test/p",
		ContentType: "application/http;msgtype=response", Profile: warc.ProfileNotModified, RefersToURI: "http://a.test/p",
		RefersToDate: at, PayloadDigest: warc.Digest(body),
		Block: warc.HTTPResponseBlock("HTTP/1.1 304 Not Modified\r\nEtag: \"v1\"\r\n\r\n", nil, false)})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	recs := testenv.ReadWARC(t, w.Path)
	if len(recs) != 4 {
		t.Fatalf("read %d records, want 4: %+v", len(recs), recs)
	}
	want := []string{"warcinfo", "request", "response", "revisit"}
	for i, r := range recs {
		if r.Type != want[i] {
			t.Errorf("record %d is %s, want %s", i, r.Type, want[i])
		}
	}
	resp := recs[2]
	if resp.Status != 200 || resp.PayloadBytes != len(body) || resp.DigestOK == nil || !*resp.DigestOK ||
		resp.Date != "2026-11-22T10:00:00.123456Z" {
		t.Errorf("response as read: %+v", resp)
	}
	if recs[3].Status != 304 || recs[3].Profile != warc.ProfileNotModified || recs[3].RefersTo != "http://a.test/p" {
		t.Errorf("revisit as read: %+v", recs[3])
	}
	// Each CDXJ line's offset and length cut exactly one readable record out of the file.
	data, _ := os.ReadFile(w.Path)
	warc.SortLines(lines)
	for _, line := range lines {
		e := parseLine(t, line)
		part := filepath.Join(dir, "part.warc.gz")
		if err := os.WriteFile(part, data[e.offset:e.offset+e.length], 0o644); err != nil {
			t.Fatal(err)
		}
		one := testenv.ReadWARC(t, part)
		if len(one) != 1 || one[0].URI != "http://a.test/p" || !strings.HasPrefix(line, "test,a)/p ") {
			t.Errorf("CDXJ line %q cuts out %+v", line, one)
		}
	}
	if !bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
		t.Error("not gzip")
	}
}

type span struct{ offset, length int64 }

func parseLine(t *testing.T, line string) span {
	t.Helper()
	var f map[string]string
	if err := json.Unmarshal([]byte(line[strings.Index(line, "{"):]), &f); err != nil {
		t.Fatalf("CDXJ line %q: %v", line, err)
	}
	off, err1 := strconv.ParseInt(f["offset"], 10, 64)
	n, err2 := strconv.ParseInt(f["length"], 10, 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("CDXJ line %q: bad offset or length", line)
	}
	return span{off, n}
}
