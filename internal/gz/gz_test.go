package gz

import (
	"bytes"
	stdgzip "compress/gzip"
	"io"
	"testing"

	"github.com/klauspost/compress/gzip"
)

// A pooled writer's output is byte for byte a new writer's, whatever it wrote before, and
// reads back as the input through the standard library's reader (the format any WARC or
// segment reader expects) and through NewReader.
func TestPooledWritersWriteWhatNewOnesDo(t *testing.T) {
	inputs := [][]byte{[]byte("hello, world"), bytes.Repeat([]byte("<p>a page of text</p>\n"), 5000), nil, []byte("x")}
	for round := range 3 {
		for i, in := range inputs {
			got, err := Compress(in)
			if err != nil {
				t.Fatal(err)
			}
			var want bytes.Buffer
			zw, _ := gzip.NewWriterLevel(&want, gzip.BestSpeed)
			_, _ = zw.Write(in)
			_ = zw.Close()
			if !bytes.Equal(got, want.Bytes()) {
				t.Fatalf("round %d input %d: pooled output differs from a new writer's", round, i)
			}
			zr, err := stdgzip.NewReader(bytes.NewReader(got))
			if err != nil {
				t.Fatal(err)
			}
			back, err := io.ReadAll(zr)
			if err != nil || !bytes.Equal(back, in) {
				t.Fatalf("round %d input %d: read back %d bytes, %v", round, i, len(back), err)
			}
			ours, err := NewReader(bytes.NewReader(got))
			if err != nil {
				t.Fatal(err)
			}
			if back, err := io.ReadAll(ours); err != nil || !bytes.Equal(back, in) {
				t.Fatalf("round %d input %d: NewReader read back %d bytes, %v", round, i, len(back), err)
			}
		}
	}
}

func BenchmarkCompressPage(b *testing.B) {
	page := bytes.Repeat([]byte("<p>a page of text, some of it the same as the rest</p>\n"), 600) // ~33 KB
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compress(page); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompressPageNewWriter is what pooling replaced: a new writer per page.
func BenchmarkCompressPageNewWriter(b *testing.B) {
	page := bytes.Repeat([]byte("<p>a page of text, some of it the same as the rest</p>\n"), 600)
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	for b.Loop() {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
		_, _ = zw.Write(page)
		_ = zw.Close()
	}
}

// BenchmarkCompressPageStdlib is the codec Compress had before (issue 36): the standard
// library's pooled BestSpeed writer on the same page.
func BenchmarkCompressPageStdlib(b *testing.B) {
	page := bytes.Repeat([]byte("<p>a page of text, some of it the same as the rest</p>\n"), 600)
	zw, _ := stdgzip.NewWriterLevel(io.Discard, stdgzip.BestSpeed)
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	for b.Loop() {
		var buf bytes.Buffer
		zw.Reset(&buf)
		_, _ = zw.Write(page)
		_ = zw.Close()
	}
}
