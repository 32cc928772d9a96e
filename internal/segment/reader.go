package segment

import (
	"bytes"
	"container/list"
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/trawlerdev/trawler/internal/blob"
	"github.com/trawlerdev/trawler/internal/gz"
)

// Ref is the reference of the item at offset, length bytes long, in segment key.
func Ref(key string, offset, length int64) string {
	return key + "#" + strconv.FormatInt(offset, 10) + "+" + strconv.FormatInt(length, 10)
}

// ParseRef splits a reference; ok is false for a plain object key.
func ParseRef(ref string) (key string, offset, length int64, ok bool) {
	i := strings.LastIndexByte(ref, '#') // a crawl's name, in the key, may hold one
	if i < 0 {
		return ref, 0, 0, false
	}
	key, span := ref[:i], ref[i+1:]
	o, l, found := strings.Cut(span, "+")
	if !found {
		return ref, 0, 0, false
	}
	offset, err1 := strconv.ParseInt(o, 10, 64)
	length, err2 := strconv.ParseInt(l, 10, 64)
	if err1 != nil || err2 != nil || offset < 0 || length <= 0 {
		return ref, 0, 0, false
	}
	return key, offset, length, true
}

// Reader reads items by reference, keeping the segments it fetched in a cache bounded in
// bytes: the pages of one segment are read by one GET, whichever lease or archive asks.
type Reader struct {
	blob     *blob.Store
	maxBytes int64

	mu       sync.Mutex
	lru      *list.List // of *cached, most recent first
	byKey    map[string]*list.Element
	bytes    int64
	inflight map[string]*fetching
	// Gets counts segment GETs (for tests and benchmarks).
	Gets int64
}

type cached struct {
	key  string
	data []byte
}

type fetching struct {
	done chan struct{}
	data []byte
	err  error
}

// NewReader returns a reader caching at most maxBytes of segments.
func NewReader(b *blob.Store, maxBytes int64) *Reader {
	return &Reader{blob: b, maxBytes: maxBytes, lru: list.New(), byKey: map[string]*list.Element{}, inflight: map[string]*fetching{}}
}

// Get reads and decompresses the item ref names (or the plain gzip object it is), refusing
// more than limit bytes.
func (r *Reader) Get(ctx context.Context, ref string, limit int64) ([]byte, error) {
	data, _, err := r.GetDeflated(ctx, ref, limit)
	return data, err
}

// GetDeflated is Get, and, when the item was stored spliceable (every item a Writer stored
// since spliceable members), its compressed stream as it is, checked by the read: the item is
// one member, whose CRC and length the decompression verified. A plain object or an older
// item gives nil.
func (r *Reader) GetDeflated(ctx context.Context, ref string, limit int64) ([]byte, *gz.Deflated, error) {
	key, off, n, ok := ParseRef(ref)
	if !ok {
		data, err := r.blob.GetBody(ctx, ref, limit)
		return data, nil, err
	}
	seg, err := r.segment(ctx, key)
	if err != nil {
		return nil, nil, err
	}
	if off+n > int64(len(seg)) {
		return nil, nil, fmt.Errorf("segment: %s is past the end of %s (%d bytes)", ref, key, len(seg))
	}
	member := seg[off : off+n]
	if d, ok := gz.SpliceableOf(member); ok {
		// Read alone: a reference spanning more than one member (which no writer makes) must
		// not pass for one; it is read as any other item below.
		if data, err := gz.ReadOne(member, limit); err == nil && d.Size == int64(len(data)) {
			return data, &d, nil
		}
	}
	data, err := blob.ReadAll(bytes.NewReader(member), ref, limit, true)
	return data, nil, err
}

// segment returns a segment's bytes from the cache, or fetches it once for all who ask.
func (r *Reader) segment(ctx context.Context, key string) ([]byte, error) {
	r.mu.Lock()
	if el, ok := r.byKey[key]; ok {
		r.lru.MoveToFront(el)
		r.mu.Unlock()
		return el.Value.(*cached).data, nil
	}
	if f, ok := r.inflight[key]; ok {
		r.mu.Unlock()
		select {
		case <-f.done:
			return f.data, f.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	f := &fetching{done: make(chan struct{})}
	r.inflight[key] = f
	r.Gets++
	r.mu.Unlock()
	f.data, f.err = r.blob.Get(ctx, key, 1<<30)
	r.mu.Lock()
	delete(r.inflight, key)
	if f.err == nil {
		r.byKey[key] = r.lru.PushFront(&cached{key: key, data: f.data})
		r.bytes += int64(len(f.data))
		for r.bytes > r.maxBytes && r.lru.Len() > 1 {
			old := r.lru.Remove(r.lru.Back()).(*cached)
			delete(r.byKey, old.key)
			r.bytes -= int64(len(old.data))
		}
	}
	r.mu.Unlock()
	close(f.done)
	return f.data, f.err
}
