// Package warc owns Trawler's WARC 1.1 output (ISO 28500:2017): request, response and
// revisit records, each its own gzip member so a reader can seek to any record, written into
// files that close at a size limit; and the CDXJ lines that index them by SURT URL and time.
package warc

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base32"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/trawlerdev/trawler/internal/gz"
)

// Record types and revisit profiles.
const (
	TypeWarcinfo = "warcinfo"
	TypeRequest  = "request"
	TypeResponse = "response"
	TypeRevisit  = "revisit"
	// TypeConversion holds content made from another record's (a rendered DOM made from a
	// response): WARC-Refers-To names that record.
	TypeConversion = "conversion"

	ProfileNotModified     = "http://netpreserve.org/warc/1.1/revisit/server-not-modified"
	ProfileIdenticalDigest = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
)

// Record is one WARC record before serialisation.
type Record struct {
	Type          string
	ID            string // urn:uuid:…
	Date          time.Time
	TargetURI     string
	ContentType   string
	ConcurrentTo  string
	PayloadDigest string // "sha256:<base32>" of the HTTP payload, if any
	Truncated     string // "length" when the body was cut at the size cap
	Profile       string // revisit records
	RefersToURI   string // revisit records: the capture this repeats
	RefersToDate  time.Time
	Extra         [][2]string // further named fields, in order
	Block         []byte
	// Payload, when set, follows Block in the record's block (a response's body after its
	// HTTP head). Deflated, when set, is that body as its segment compressed it
	// (gz.SpliceableOf): the record's member then carries it as it is, compressing only what
	// surrounds it.
	Payload  []byte
	Deflated *gz.Deflated
}

// Marshal writes the record as one gzip member and returns its compressed length.
func (r Record) Marshal(w io.Writer) (int64, error) {
	var head bytes.Buffer
	field := func(name, value string) {
		if value != "" {
			fmt.Fprintf(&head, "%s: %s\r\n", name, escapeControls(value))
		}
	}
	head.WriteString("WARC/1.1\r\n")
	field("WARC-Type", r.Type)
	field("WARC-Record-ID", "<"+r.ID+">")
	field("WARC-Date", FormatDate(r.Date))
	field("WARC-Target-URI", r.TargetURI)
	if r.ConcurrentTo != "" {
		field("WARC-Concurrent-To", "<"+r.ConcurrentTo+">")
	}
	field("WARC-Profile", r.Profile)
	field("WARC-Refers-To-Target-URI", r.RefersToURI)
	if !r.RefersToDate.IsZero() {
		field("WARC-Refers-To-Date", FormatDate(r.RefersToDate))
	}
	field("WARC-Payload-Digest", r.PayloadDigest)
	field("WARC-Block-Digest", blockDigest(r.Block, r.Payload))
	field("WARC-Truncated", r.Truncated)
	for _, kv := range r.Extra {
		field(kv[0], kv[1])
	}
	field("Content-Type", r.ContentType)
	fmt.Fprintf(&head, "Content-Length: %d\r\n\r\n", len(r.Block)+len(r.Payload))

	var n int64
	var err error
	if d := r.Deflated; d != nil && d.Size == int64(len(r.Payload)) {
		n, err = gz.WriteSpliced(w, [][]byte{head.Bytes(), r.Block}, *d, recordEnd)
	} else {
		n, err = gz.WriteMember(w, head.Bytes(), r.Block, r.Payload, recordEnd)
	}
	if err != nil {
		return n, fmt.Errorf("warc: write record: %w", err)
	}
	return n, nil
}

// recordEnd follows every record's block.
var recordEnd = []byte("\r\n\r\n")

// blockDigest is Digest of block followed by payload.
func blockDigest(block, payload []byte) string {
	h := sha256.New()
	h.Write(block)
	h.Write(payload)
	return DigestOf(h.Sum(nil))
}

// FormatDate is WARC-Date's form: UTC, to the microsecond (WARC 1.1 allows fractions).
func FormatDate(t time.Time) string {
	return t.UTC().Truncate(time.Microsecond).Format("2006-01-02T15:04:05.999999Z")
}

// Digest is the labelled SHA-256 digest WARC fields carry: "sha256:" and base32.
func Digest(b []byte) string {
	h := sha256.Sum256(b)
	return DigestOf(h[:])
}

// DigestOf labels a SHA-256 sum computed elsewhere (a stored content hash).
func DigestOf(sum []byte) string { return "sha256:" + base32.StdEncoding.EncodeToString(sum) }

// RecordID derives a stable urn:uuid from a name (name-based, RFC 4122 version 5 layout), so
// a file rewritten after a crash carries the same record IDs.
func RecordID(name string) string {
	h := sha1.Sum([]byte("trawler-warc:" + name))
	h[6] = h[6]&0x0f | 0x50
	h[8] = h[8]&0x3f | 0x80
	return fmt.Sprintf("urn:uuid:%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}

// framing names the response headers that describe the bytes on the wire, not the payload we
// store (decoded, maybe truncated): they are kept under X-Archive-Orig- and Content-Length is
// set to the stored payload, so a reader parses the record's HTTP block correctly.
var framing = map[string]bool{"content-length": true, "transfer-encoding": true, "content-encoding": true}

// HTTPResponseBlock is a response record's block: the status line and headers as received,
// with framing headers renamed, then the payload.
func HTTPResponseBlock(head string, payload []byte, withLength bool) []byte {
	return append(HTTPResponseHead(head, len(payload), withLength), payload...)
}

// HTTPResponseHead is HTTPResponseBlock's head, for a payload of length bytes: a record with
// it as Block and the payload as Payload holds the same block.
func HTTPResponseHead(head string, length int, withLength bool) []byte {
	var b bytes.Buffer
	lines := strings.Split(strings.TrimRight(head, "\r\n"), "\r\n")
	for i, line := range lines {
		if i > 0 {
			if name, _, ok := strings.Cut(line, ":"); ok && framing[strings.ToLower(strings.TrimSpace(name))] {
				line = "X-Archive-Orig-" + line
			}
		}
		b.WriteString(line)
		b.WriteString("\r\n")
	}
	if withLength {
		fmt.Fprintf(&b, "Content-Length: %d\r\n", length)
	}
	b.WriteString("\r\n")
	return b.Bytes()
}

// escapeControls percent-encodes control characters (CR and LF above all), so a value from the
// web — a URL, a content type — stays on its header line, and a CDXJ line stays one line.
func escapeControls(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f {
			fmt.Fprintf(&b, "%%%02X", c)
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}
