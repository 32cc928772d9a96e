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

// A pooled reader reads what a new one does, whatever it read before: a stream cut short, a
// stream that is not gzip, two members one after the other; and once released it holds
// nothing of its last source.
func TestPooledReadersReadWhatNewOnesDo(t *testing.T) {
	page := bytes.Repeat([]byte("<p>a page of text</p>\n"), 5000)
	whole, _ := Compress(page)
	second, _ := Compress([]byte("and more"))
	for round := range 3 {
		cut, err := NewReader(bytes.NewReader(whole[:len(whole)/2]))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadAll(cut); err == nil {
			t.Fatalf("round %d: a stream cut in half read without an error", round)
		}
		ReleaseReader(cut)
		if _, err := NewReader(bytes.NewReader([]byte("not gzip at all"))); err == nil {
			t.Fatalf("round %d: a stream that is not gzip opened", round)
		}
		zr, err := NewReader(bytes.NewReader(append(append([]byte{}, whole...), second...)))
		if err != nil {
			t.Fatal(err)
		}
		back, err := io.ReadAll(zr)
		if err != nil || !bytes.Equal(back, append(append([]byte{}, page...), "and more"...)) {
			t.Fatalf("round %d: read back %d bytes, %v; want both members", round, len(back), err)
		}
		ReleaseReader(zr)
		half, err := NewReader(bytes.NewReader(whole))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(half, make([]byte, 10)); err != nil {
			t.Fatal(err)
		}
		ReleaseReader(half)
		if back, err := io.ReadAll(half); err != nil || len(back) != 0 {
			t.Fatalf("round %d: a reader released halfway read %d bytes more, %v; want nothing left of its source", round, len(back), err)
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
