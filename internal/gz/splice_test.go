package gz

import (
	"bytes"
	stdgzip "compress/gzip"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"testing"
)

// spliceInputs are texts a page body can be: empty, one byte, repetitive HTML past the 32 KiB
// window, and incompressible bytes (stored blocks).
func spliceInputs(r *rand.Rand) [][]byte {
	noise := make([]byte, 70_000)
	for i := range noise {
		noise[i] = byte(r.Uint32())
	}
	return [][]byte{nil, []byte("x"), []byte("hello, world"), bytes.Repeat([]byte("<p>a page of text</p>\n"), 5000), noise}
}

// readOneMember reads exactly one gzip member with the standard library's reader, failing the
// test when more follow.
func readOneMember(t *testing.T, member []byte) []byte {
	t.Helper()
	zr, err := stdgzip.NewReader(bytes.NewReader(member))
	if err != nil {
		t.Fatal(err)
	}
	zr.Multistream(false)
	got, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if rest, _ := io.ReadAll(zr); len(rest) > 0 {
		t.Fatalf("%d bytes after the member", len(rest))
	}
	return got
}

// A spliceable member reads back as its input through the standard library's reader and
// NewReader, and SpliceableOf finds its stream, CRC and length; a plain member, a truncated
// one and a stream with its marker cut are refused.
func TestSpliceableMembersReadAsGzipAndGiveTheirStream(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i, in := range spliceInputs(r) {
		for range 2 { // a pooled writer again
			m, err := CompressSpliceable(in)
			if err != nil {
				t.Fatal(err)
			}
			if got := readOneMember(t, m); !bytes.Equal(got, in) {
				t.Fatalf("input %d: the standard reader read %d bytes, want %d", i, len(got), len(in))
			}
			zr, err := NewReader(bytes.NewReader(m))
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(zr)
			ReleaseReader(zr)
			if err != nil || !bytes.Equal(got, in) {
				t.Fatalf("input %d: NewReader: %v", i, err)
			}
			d, ok := SpliceableOf(m)
			if !ok || d.CRC != crc32.ChecksumIEEE(in) || d.Size != int64(len(in)) {
				t.Fatalf("input %d: SpliceableOf = %v, crc %x size %d", i, ok, d.CRC, d.Size)
			}
			if !bytes.HasSuffix(d.Stream, []byte{0, 0, 0xff, 0xff}) {
				t.Fatalf("input %d: the stream does not end on a sync flush", i)
			}
		}
		plain, _ := Compress(in)
		if _, ok := SpliceableOf(plain); ok {
			t.Fatalf("input %d: a plain member taken as spliceable", i)
		}
		m, _ := CompressSpliceable(in)
		if _, ok := SpliceableOf(m[:len(m)-1]); ok {
			t.Fatalf("input %d: a truncated member taken as spliceable", i)
		}
	}
	if _, ok := SpliceableOf(spliceMark); ok {
		t.Fatal("a bare header taken as spliceable")
	}
}

// A spliced member is one gzip member whose bytes are head's, the stream's, then tail's, for
// every input, whichever reader reads it.
func TestWriteSplicedIsOneMemberOfItsParts(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	ins := spliceInputs(r)
	heads := [][][]byte{nil, {[]byte("WARC/1.1\r\n"), []byte("HTTP/1.1 200 OK\r\n\r\n")}, {ins[3][:40_000]}}
	for i, in := range ins {
		m, _ := CompressSpliceable(in)
		d, ok := SpliceableOf(m)
		if !ok {
			t.Fatalf("input %d: not spliceable", i)
		}
		for j, head := range heads {
			var out bytes.Buffer
			n, err := WriteSpliced(&out, head, d, []byte("\r\n\r\n"))
			if err != nil || n != int64(out.Len()) {
				t.Fatalf("input %d head %d: %v, said %d of %d bytes", i, j, err, n, out.Len())
			}
			want := append(bytes.Join(head, nil), in...)
			want = append(want, "\r\n\r\n"...)
			if got := readOneMember(t, out.Bytes()); !bytes.Equal(got, want) {
				t.Fatalf("input %d head %d: read %d bytes, want %d", i, j, len(got), len(want))
			}
			zr, _ := NewReader(bytes.NewReader(out.Bytes()))
			got, err := io.ReadAll(zr)
			ReleaseReader(zr)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("input %d head %d: NewReader: %v", i, j, err)
			}
		}
	}
}

// CombineCRC agrees with the CRC of the concatenation at every split, empty parts included.
func TestCombineCRCAgreesWithTheWhole(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	data := make([]byte, 5000)
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	for _, cut := range []int{0, 1, 2, 3, 7, 8, 100, 2500, 4999, 5000} {
		a, b := data[:cut], data[cut:]
		if got, want := CombineCRC(crc32.ChecksumIEEE(a), crc32.ChecksumIEEE(b), int64(len(b))), crc32.ChecksumIEEE(data); got != want {
			t.Fatalf("cut %d: %08x, want %08x", cut, got, want)
		}
	}
}

// benchPage is about 50 KB of HTML-like text from a few hundred words in random order:
// compressible as a page is, not as one repeated line is.
func benchPage() []byte {
	r := rand.New(rand.NewPCG(7, 8))
	words := make([]string, 400)
	for i := range words {
		w := make([]byte, 2+r.IntN(8))
		for j := range w {
			w[j] = 'a' + byte(r.IntN(26))
		}
		words[i] = string(w)
	}
	var b bytes.Buffer
	for b.Len() < 50_000 {
		b.WriteString("<p class=\"t\">")
		for range 12 + r.IntN(30) {
			b.WriteString(words[r.IntN(len(words))])
			b.WriteByte(' ')
		}
		b.WriteString("</p>\n")
	}
	return b.Bytes()
}

// ReadOne reads one member whole, and refuses two (an empty one first included), a member
// with bytes after it, and a member over its limit.
func TestReadOneReadsExactlyOneMember(t *testing.T) {
	in := bytes.Repeat([]byte("one member "), 100)
	m, _ := CompressSpliceable(in)
	if got, err := ReadOne(m, 1<<20); err != nil || !bytes.Equal(got, in) {
		t.Fatalf("one member: %d bytes, %v", len(got), err)
	}
	empty, _ := CompressSpliceable(nil)
	for name, bad := range map[string][]byte{"two": append(bytes.Clone(empty), m...), "trailing": append(bytes.Clone(m), 0)} {
		if _, err := ReadOne(bad, 1<<20); err == nil {
			t.Errorf("%s: read as one member", name)
		}
	}
	if _, err := ReadOne(m, int64(len(in))-1); err == nil {
		t.Error("a member over its limit was read")
	}
	// (the pooled reader it used reads every member again)
	zr, _ := NewReader(bytes.NewReader(append(bytes.Clone(m), m...)))
	got, err := io.ReadAll(zr)
	ReleaseReader(zr)
	if err != nil || len(got) != 2*len(in) {
		t.Fatalf("a reader after ReadOne read %d bytes of two members, %v", len(got), err)
	}
}

// CombineCRC is associative over lengths far past any test's bytes (every operator of the
// table in use): combining three parts either way gives one CRC.
func TestCombineCRCHoldsForLongLengths(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for range 200 {
		x, y, z := r.Uint32(), r.Uint32(), r.Uint32()
		n, m := r.Int64N(1<<62), r.Int64N(1<<40)
		if CombineCRC(CombineCRC(x, y, n), z, m) != CombineCRC(x, CombineCRC(y, z, m), n+m) {
			t.Fatalf("not associative at lengths %d and %d", n, m)
		}
	}
}

// recordHead is a response record's WARC and HTTP headers as the archiver writes them.
var recordHead = []byte("WARC/1.1\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:6f2a9c1e-3b4d-5e6f-8a9b-0c1d2e3f4a5b>\r\n" +
	"WARC-Date: 2026-11-29T14:50:52.123456Z\r\nWARC-Target-URI: http://h0001.test/p/1234/some-article-name\r\n" +
	"WARC-Concurrent-To: <urn:uuid:1a2b3c4d-5e6f-5a7b-8c9d-0e1f2a3b4c5d>\r\n" +
	"WARC-Payload-Digest: sha256:ABCDEFGHIJKLMNOPQRSTUVWXYZ234567ABCDEFGHIJKLMNOPQRST\r\n" +
	"WARC-Block-Digest: sha256:QRSTUVWXYZ234567ABCDEFGHIJKLMNOPABCDEFGHIJKLMNOPQRST\r\n" +
	"Content-Type: application/http;msgtype=response\r\nContent-Length: 50321\r\n\r\n" +
	"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nDate: Sun, 29 Nov 2026 14:50:52 GMT\r\n" +
	"Server: testweb\r\nX-Archive-Orig-Content-Length: 50220\r\nContent-Length: 50220\r\n\r\n")

// A response record of a 50 KB page (a page of the real web) and of a 3 KB one (the bench's
// test web), spliced and compressed whole.
func BenchmarkRecord(b *testing.B) {
	for _, size := range []int{50_000, 3_000} {
		page := benchPage()[:size]
		m, _ := CompressSpliceable(page)
		d, _ := SpliceableOf(m)
		b.Run(fmt.Sprintf("spliced/%dKB", size/1000), func(b *testing.B) {
			b.SetBytes(int64(len(page)))
			for b.Loop() {
				if _, err := WriteSpliced(io.Discard, [][]byte{recordHead}, d, []byte("\r\n\r\n")); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("whole/%dKB", size/1000), func(b *testing.B) {
			b.SetBytes(int64(len(page)))
			for b.Loop() {
				if _, err := WriteMember(io.Discard, recordHead, page, []byte("\r\n\r\n")); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
