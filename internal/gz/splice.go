package gz

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"sync"

	"github.com/klauspost/compress/flate"
)

// Splicing: a WARC response record holds the page body the fetcher already compressed into
// its segment, and compressing it again was a fifth of the processing worker's CPU (the
// archiver's gzip, issue 49). Deflate streams concatenate: a stream that ends on a sync flush
// (byte-aligned, no final block) can be followed by another, and back-references never reach
// before the stream that holds them when each was compressed from a fresh window. So a
// record's member is its headers compressed, the stored body's stream copied as it is, and
// the record's end compressed; its CRC-32 is combined from the three parts'.

// Deflated is an item's bytes as a raw deflate stream that can be spliced into another
// member: it ends on a sync flush, holds no final block, and refers only within itself.
type Deflated struct {
	Stream []byte
	CRC    uint32 // CRC-32 of the uncompressed bytes
	Size   int64  // their length (an item's, below 4 GiB: a gzip trailer holds it mod 2³²)
}

// spliceMark is the gzip header of a spliceable member: FEXTRA set, one empty subfield "Tw".
// Only members written by CompressSpliceable carry it, so a member from anywhere else (an
// older segment, a plain gzip object) is never mistaken for one.
var spliceMark = []byte{0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 0xff, 4, 0, 'T', 'w', 0, 0}

// spliceEnd is what follows a spliceable member's stream: an empty final stored block (the
// stream before it ends byte-aligned), then the trailer's 8 bytes.
var spliceEnd = []byte{1, 0, 0, 0xff, 0xff}

var flateWriters = sync.Pool{New: func() any {
	fw, _ := flate.NewWriter(io.Discard, flate.BestSpeed) // (a valid level: never an error)
	return fw
}}

// CompressSpliceable gzips data as one member, fast, whose stream SpliceableOf can take out
// again. Any gzip reader reads it as it reads Compress's.
func CompressSpliceable(data []byte) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(len(data)/3 + 64)
	buf.Write(spliceMark)
	fw := flateWriters.Get().(*flate.Writer)
	fw.Reset(&buf)
	defer releaseFlate(fw)
	if _, err := fw.Write(data); err != nil {
		return nil, err
	}
	if err := fw.Flush(); err != nil {
		return nil, err
	}
	buf.Write(spliceEnd)
	buf.Write(trailer(crc32.ChecksumIEEE(data), int64(len(data))))
	return buf.Bytes(), nil
}

// SpliceableOf is the stream inside a member CompressSpliceable wrote; ok is false for any
// other member. It trusts the trailer: a caller that has not read the member alone through
// ReadOne (which checks the CRC and length, and that nothing follows) must not splice it.
func SpliceableOf(member []byte) (d Deflated, ok bool) {
	end := len(member) - len(spliceEnd) - 8
	if end < len(spliceMark) || !bytes.HasPrefix(member, spliceMark) || !bytes.Equal(member[end:end+len(spliceEnd)], spliceEnd) {
		return Deflated{}, false
	}
	t := member[len(member)-8:]
	return Deflated{Stream: member[len(spliceMark):end], CRC: binary.LittleEndian.Uint32(t), Size: int64(binary.LittleEndian.Uint32(t[4:]))}, true
}

// ReadOne decompresses member, which must be exactly one gzip member (its trailer checked, no
// byte after it), refusing more than limit bytes.
func ReadOne(member []byte, limit int64) ([]byte, error) {
	br := bytes.NewReader(member)
	zr, err := NewReader(br) // (a bytes.Reader is a ByteReader: read no further than the member)
	if err != nil {
		return nil, err
	}
	defer ReleaseReader(zr) // (a reset reader reads every member again)
	zr.Multistream(false)
	data, err := io.ReadAll(io.LimitReader(zr, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("gz: a member larger than %d bytes", limit)
	}
	if br.Len() > 0 {
		return nil, fmt.Errorf("gz: %d bytes after the member", br.Len())
	}
	return data, nil
}

// plainHeader is a gzip header with no fields: what a record's member starts with.
var plainHeader = []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}

// WriteMember compresses parts, in order, into one gzip member on w and returns its length.
func WriteMember(w io.Writer, parts ...[]byte) (int64, error) {
	cw := &counter{w: w}
	zw := NewWriter(cw)
	defer Release(zw)
	for _, p := range parts {
		if _, err := zw.Write(p); err != nil {
			return cw.n, err
		}
	}
	err := zw.Close()
	return cw.n, err
}

// WriteSpliced writes one gzip member of head's parts, then d's bytes, then tail, compressing
// only head and tail, and returns its length.
func WriteSpliced(w io.Writer, head [][]byte, d Deflated, tail []byte) (int64, error) {
	cw := &counter{w: w}
	if _, err := cw.Write(plainHeader); err != nil {
		return cw.n, err
	}
	fw := flateWriters.Get().(*flate.Writer)
	defer releaseFlate(fw)
	fw.Reset(cw)
	var crc uint32
	var size int64
	for _, p := range head {
		if _, err := fw.Write(p); err != nil {
			return cw.n, err
		}
		crc, size = crc32.Update(crc, crc32.IEEETable, p), size+int64(len(p))
	}
	if err := fw.Flush(); err != nil {
		return cw.n, err
	}
	if _, err := cw.Write(d.Stream); err != nil {
		return cw.n, err
	}
	crc, size = CombineCRC(crc, d.CRC, d.Size), size+d.Size
	fw.Reset(cw) // a fresh window: tail's references must not reach across d
	if _, err := fw.Write(tail); err != nil {
		return cw.n, err
	}
	if err := fw.Close(); err != nil {
		return cw.n, err
	}
	crc, size = CombineCRC(crc, crc32.ChecksumIEEE(tail), int64(len(tail))), size+int64(len(tail))
	_, err := cw.Write(trailer(crc, size))
	return cw.n, err
}

func releaseFlate(fw *flate.Writer) {
	fw.Reset(io.Discard) // drop the reference to the last destination
	flateWriters.Put(fw)
}

// trailer is a gzip member's end: the CRC-32 and the length mod 2³², little-endian.
func trailer(crc uint32, size int64) []byte {
	var t [8]byte
	binary.LittleEndian.PutUint32(t[:], crc)
	binary.LittleEndian.PutUint32(t[4:], uint32(size))
	return t[:]
}

type counter struct {
	w io.Writer
	n int64
}

func (c *counter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// CombineCRC is the CRC-32 (IEEE) of a's bytes followed by b's, from a's CRC, b's and b's
// length n (zlib's crc32_combine): a's CRC times x^(8·n) in GF(2), by the operators that
// append 2^k zero bytes, one for each bit set in n. A length of 0 or less appends nothing.
func CombineCRC(a, b uint32, n int64) uint32 {
	for k := 0; n > 0; k, n = k+1, n>>1 {
		if n&1 != 0 {
			a = gf2Times(&zeroBytes[k], a)
		}
	}
	return a ^ b
}

// zeroBytes[k] is the operator on a CRC-32 that appends 2^k zero bytes: the one-bit operator
// (the reflected polynomial) squared three times, then once more for each k.
var zeroBytes = func() (ops [63][32]uint32) {
	var bit [32]uint32
	bit[0] = 0xedb88320
	for i := 1; i < 32; i++ {
		bit[i] = 1 << (i - 1)
	}
	var two, four [32]uint32
	gf2Square(&two, &bit)
	gf2Square(&four, &two)
	gf2Square(&ops[0], &four)
	for k := 1; k < len(ops); k++ {
		gf2Square(&ops[k], &ops[k-1])
	}
	return ops
}()

func gf2Times(mat *[32]uint32, vec uint32) uint32 {
	var sum uint32
	for i := 0; vec != 0; i, vec = i+1, vec>>1 {
		if vec&1 != 0 {
			sum ^= mat[i]
		}
	}
	return sum
}

func gf2Square(square, mat *[32]uint32) {
	for i := range mat {
		square[i] = gf2Times(mat, mat[i])
	}
}
