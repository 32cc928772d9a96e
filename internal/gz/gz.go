// Package gz owns Trawler's gzip: pooled writers and readers, and the spliceable members a
// WARC record carries as they are stored (splice.go). A flate compressor's state is
// about a megabyte that NewWriter allocates and zeroes: made afresh for every page's text and
// every WARC record, it was the processing worker's largest single cost (17% of its CPU in the
// long-tailed bench), and the garbage collector's work after it. The codec is
// github.com/klauspost/compress's (already in the build through minio-go): the same gzip
// format, readable by any reader, at about half the standard library's CPU at BestSpeed
// (BenchmarkCompressPage against BenchmarkCompressPageStdlib), where compression was still
// the fetch worker's and the archiver's largest cost (issue 36).
package gz

import (
	"bufio"
	"bytes"
	"io"
	"sync"

	"github.com/klauspost/compress/gzip"
)

var writers = sync.Pool{New: func() any {
	zw, _ := gzip.NewWriterLevel(io.Discard, gzip.BestSpeed) // (a valid level: never an error)
	return zw
}}

// NewWriter returns a fast (BestSpeed) gzip writer onto w, from the pool. Hand it back with
// Release once closed; its output is the same as a new writer's.
func NewWriter(w io.Writer) *gzip.Writer {
	zw := writers.Get().(*gzip.Writer)
	zw.Reset(w)
	return zw
}

// Release returns zw to the pool; it must not be used after.
func Release(zw *gzip.Writer) {
	zw.Reset(io.Discard) // drop the reference to the last destination
	writers.Put(zw)
}

// Compress gzips data as one member, fast.
func Compress(data []byte) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(len(data)/3 + 64)
	zw := NewWriter(&buf)
	defer Release(zw)
	if _, err := zw.Write(data); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

var readers sync.Pool

// emptyMember is a gzip member of nothing: a released reader is reset onto it, so the pool
// holds no reference to the last source (a stored segment of megabytes, say).
var emptyMember = func() []byte {
	data, _ := Compress(nil) // (into memory: never an error)
	return data
}()

// NewReader returns a gzip reader of r (every member, as compress/gzip reads them), from the
// pool: a new one allocates a 32 KiB window and its tables, a fifth of the bytes the processing
// worker allocated when every page body read made one (issue 49). Hand it back with
// ReleaseReader once read.
func NewReader(r io.Reader) (*gzip.Reader, error) {
	if _, ok := r.(io.ByteReader); !ok {
		// Buffered here, not by the reader: a reader buffers such a source itself and keeps
		// that buffer, with the source in it, across Reset; pooled, it would hold it.
		r = bufio.NewReader(r)
	}
	zr, ok := readers.Get().(*gzip.Reader)
	if !ok {
		return gzip.NewReader(r)
	}
	if err := zr.Reset(r); err != nil {
		ReleaseReader(zr)
		return nil, err
	}
	return zr, nil
}

// ReleaseReader returns zr to the pool; it must not be used after.
func ReleaseReader(zr *gzip.Reader) {
	if zr.Reset(bytes.NewReader(emptyMember)) == nil {
		readers.Put(zr)
	}
}
