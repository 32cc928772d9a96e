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

	"github.com/trawlerdev/trawler/internal/gz"
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
	// A response whose body is spliced from its stored member (what the archiver writes).
	add(splicedResponse(t, warc.Record{Type: warc.TypeResponse, ID: warc.RecordID("k3/response"), Date: at.Add(2 * time.Hour),
		TargetURI: "http://a.test/p", ContentType: "application/http;msgtype=response", PayloadDigest: warc.Digest(body)}, head, body))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	recs := testenv.ReadWARC(t, w.Path)
	if len(recs) != 5 {
		t.Fatalf("read %d records, want 5: %+v", len(recs), recs)
	}
	want := []string{"warcinfo", "request", "response", "revisit", "response"}
	for i, r := range recs {
		if r.Type != want[i] {
			t.Errorf("record %d is %s, want %s", i, r.Type, want[i])
		}
	}
	for i, date := range map[int]string{2: "2026-11-22T10:00:00.123456Z", 4: "2026-11-22T12:00:00.123456Z"} {
		resp := recs[i]
		if resp.Status != 200 || resp.PayloadBytes != len(body) || resp.DigestOK == nil || !*resp.DigestOK || resp.Date != date {
			t.Errorf("response %d as read: %+v", i, resp)
		}
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

// splicedResponse is r holding body after head's HTTP head, spliced from the member a segment
// would store it in.
func splicedResponse(t *testing.T, r warc.Record, head string, body []byte) warc.Record {
	t.Helper()
	m, err := gz.CompressSpliceable(body)
	if err != nil {
		t.Fatal(err)
	}
	d, ok := gz.SpliceableOf(m)
	if !ok {
		t.Fatal("the stored member is not spliceable")
	}
	r.Block, r.Payload, r.Deflated = warc.HTTPResponseHead(head, len(body), true), body, &d
	return r
}

// A spliced record holds byte for byte what the same record compressed whole holds, in one
// gzip member, and carries the stored stream as it is; a stream whose length disagrees with
// the payload is not spliced.
func TestSplicedRecordHoldsWhatMarshalWrites(t *testing.T) {
	head := "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n"
	for _, body := range [][]byte{nil, []byte("<p>short</p>"), bytes.Repeat([]byte("<li>an item of a long list</li>\n"), 3000)} {
		base := warc.Record{Type: warc.TypeResponse, ID: warc.RecordID("s/response"), Date: time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC),
			TargetURI: "http://a.test/s", ContentType: "application/http;msgtype=response", PayloadDigest: warc.Digest(body)}
		whole := base
		whole.Block = warc.HTTPResponseBlock(head, body, true)
		spliced := splicedResponse(t, base, head, body)
		var a, b bytes.Buffer
		if _, err := whole.Marshal(&a); err != nil {
			t.Fatal(err)
		}
		n, err := spliced.Marshal(&b)
		if err != nil || n != int64(b.Len()) {
			t.Fatalf("spliced: %v, said %d of %d bytes", err, n, b.Len())
		}
		if got, want := gunzipOne(t, b.Bytes()), gunzipOne(t, a.Bytes()); !bytes.Equal(got, want) {
			t.Fatalf("%d-byte body: the spliced record reads\n%q\nwant\n%q", len(body), got, want)
		}
		if !bytes.Contains(b.Bytes(), spliced.Deflated.Stream) {
			t.Fatalf("%d-byte body: the stored stream is not in the record", len(body))
		}
		spliced.Payload = append(bytes.Clone(body), 'x')
		var c bytes.Buffer
		if _, err := spliced.Marshal(&c); err != nil {
			t.Fatal(err)
		}
		if got := gunzipOne(t, c.Bytes()); !bytes.HasSuffix(got, append(append(bytes.Clone(body), 'x'), "\r\n\r\n"...)) {
			t.Fatalf("%d-byte body: a payload its stream does not match was spliced", len(body))
		}
	}
}

// gunzipOne reads exactly one gzip member (gz.ReadOne: its trailer checked, nothing after it).
func gunzipOne(t *testing.T, member []byte) []byte {
	t.Helper()
	got, err := gz.ReadOne(member, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	return got
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
