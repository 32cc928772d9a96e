package fetch

import (
	"bufio"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/andybalholm/brotli"
	"github.com/trawlerdev/trawler/internal/membudget"
)

// readBody decodes the transfer and reads at most max bytes of the decoded body (and at most
// max bytes off the wire), growing hold with the memory it takes.
func readBody(ctx context.Context, dl *deadline, resp *http.Response, max int64, hold *membudget.Hold) ([]byte, bool, error) {
	taken := hold.Bytes() // what the request took before it was sent: the buffer's start
	wire := &countingReader{r: io.LimitReader(resp.Body, max+1)}
	var dec io.Reader = wire
	hint := int64(-1) // the decoded length, where the header says it
	switch strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding"))) {
	case "", "identity":
		hint = resp.ContentLength
	case "gzip", "x-gzip":
		if err := grow(ctx, dl, hold, flateState); err != nil {
			return nil, false, err
		}
		zr, err := gzip.NewReader(wire)
		if err != nil {
			return nil, false, fmt.Errorf("gzip body: %w", err)
		}
		defer zr.Close()
		dec = zr
	case "br":
		// A brotli decoder keeps a window of up to 16 MiB, as the stream's header asks, and
		// Huffman tables of up to a few MiB: held in the budget like the body (until the body
		// is read), so a thousand small answers cannot ask for 16 GiB. No body: no decoder.
		br := bufio.NewReader(wire)
		if head, _ := br.Peek(1); len(head) > 0 {
			if err := grow(ctx, dl, hold, brotliWindow(head)+brotliTables); err != nil {
				return nil, false, err
			}
		}
		dec = brotli.NewReader(br)
	case "deflate":
		// HTTP's deflate is the zlib format (RFC 9110 §8.4.1.2); many servers send raw
		// deflate under the same name. The zlib header tells them apart.
		if err := grow(ctx, dl, hold, flateState); err != nil {
			return nil, false, err
		}
		br := bufio.NewReader(wire)
		if head, _ := br.Peek(2); len(head) == 2 && head[0]&0x0f == 8 && (uint16(head[0])<<8|uint16(head[1]))%31 == 0 {
			zr, err := zlib.NewReader(br)
			if err != nil {
				return nil, false, fmt.Errorf("deflate (zlib) body: %w", err)
			}
			defer zr.Close()
			dec = zr
		} else {
			fr := flate.NewReader(br)
			defer fr.Close()
			dec = fr
		}
	default:
		return nil, false, fmt.Errorf("unsupported Content-Encoding %q", resp.Header.Get("Content-Encoding"))
	}
	body, err := readAll(ctx, dl, dec, max+1, hint, hold, taken)
	truncated := int64(len(body)) > max || wire.n > max
	if int64(len(body)) > max {
		body = body[:max]
	}
	if err != nil && !(truncated && (errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF))) {
		return body, truncated, err
	}
	return body, truncated, nil
}

// readAll reads r to its end or limit bytes, into a buffer sized by hint (the length the
// server announced, -1 if none) and doubled as it fills. hold grows before the buffer does,
// so that what it holds covers the buffer's capacity; taken bytes of it are the buffer's
// already.
func readAll(ctx context.Context, dl *deadline, r io.Reader, limit, hint int64, hold *membudget.Hold, taken int64) ([]byte, error) {
	size := int64(512)
	if hint >= 0 {
		// +1: the read that finds the end needs room. At most presizeMost on the server's
		// word: a length it announces and does not send must not hold the budget.
		size = min(hint+1, presizeMost)
	}
	size = min(max(size, 512), limit)
	if err := grow(ctx, dl, hold, size-taken); err != nil {
		return nil, err
	}
	held := max(size, taken)
	buf := make([]byte, 0, size)
	for {
		if int64(len(buf)) >= limit {
			return buf, nil
		}
		if len(buf) == cap(buf) {
			next := min(int64(cap(buf))*2, limit)
			if err := grow(ctx, dl, hold, next-held); err != nil {
				return buf, err
			}
			held = max(held, next)
			grown := make([]byte, len(buf), next)
			copy(grown, buf)
			buf = grown
		}
		n, err := r.Read(buf[len(buf):min(int64(cap(buf)), limit)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// presizeMost is the most a body's buffer is sized at on the strength of its Content-Length
// alone; past it the buffer grows as bytes arrive.
const presizeMost = 1 << 20

// flateState is what a gzip, zlib or raw deflate reader holds: its 32 KiB window, tables and
// buffers.
const flateState = 64 << 10

// brotliTables bounds what a brotli decoder holds besides its window: the Huffman tables a
// stream may ask for (up to 256 trees in each of three groups) and its buffers.
const brotliTables = 3 << 20

// grow grows hold by n bytes with the request's clock stopped: a wait for room in the
// worker's budget is not the site's slowness.
func grow(ctx context.Context, dl *deadline, hold *membudget.Hold, n int64) error {
	if n <= 0 || hold == nil {
		return nil
	}
	dl.pause()
	defer dl.resume()
	return hold.Grow(ctx, n)
}

// brotliWindow is the decoding window a brotli stream's first byte declares (RFC 7932 §9.1):
// 2^WBITS bytes, at most 16 MiB. Its reading needs up to 7 bits; a stream whose first byte
// is missing, or that asks for a large window, is held at the most.
func brotliWindow(head []byte) int64 {
	const most = 1 << 24
	if len(head) == 0 {
		return most
	}
	b := head[0]
	switch {
	case b&1 == 0:
		return 1 << 16
	case (b>>1)&7 != 0:
		return 1 << (17 + (b>>1)&7)
	case (b>>4)&7 == 0:
		return 1 << 17
	case (b>>4)&7 == 1:
		return most // a large window, which the decoder refuses anyway
	default:
		return 1 << (8 + (b>>4)&7)
	}
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
