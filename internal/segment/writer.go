// Package segment stores many small objects — page bodies, extracted texts — in one stored
// object per few seconds or few megabytes (a segment), and reads them back by reference
// (segment key, offset, length). It is what keeps S3 requests per page far below one: a
// fetch worker writes one PUT for every page its leases fetched in the last seconds, and a
// reader fetches a segment once for all the pages in it.
//
// Each item is its own gzip member, so a segment is a valid gzip stream and an item can be
// read alone from its offset. A reference is the string "<key>#<offset>+<length>"; any other
// string is a plain object key (content-addressed bodies stored before segments).
//
// A segment holds the items of one group — one crawl — under "<prefix>/crawl=<group>/"
// (GroupPrefix): deleting a crawl deletes its segments whole, and never touches another
// crawl's items. ("crawl=" keeps a group apart from the "<day>/" folders of segments written
// before groups, which mixed crawls: a crawl named like a day must not own them.)
package segment

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/trawlerdev/trawler/internal/blob"
	"github.com/trawlerdev/trawler/internal/gz"
)

// Options shape a Writer.
type Options struct {
	Prefix   string        // key prefix, e.g. "segments/bodies"
	Name     string        // this writer's name in keys (a worker process's id)
	MaxAge   time.Duration // an item waits at most this long for its segment to be stored
	MaxBytes int           // a segment is stored once it holds this much
}

// Writer gathers items into segments and stores each with one PUT.
type Writer struct {
	blob *blob.Store
	o    Options

	mu      sync.Mutex
	cur     map[string]*pending // the segment being filled, per group
	seq     int64
	started string // the writer's start, in keys: names never repeat across restarts
}

// pending is a segment being filled or stored; done is closed once it is stored (err says how).
type pending struct {
	group string
	key   string
	buf   bytes.Buffer
	done  chan struct{}
	err   error
	timer *time.Timer
}

// NewWriter returns a writer storing into b.
func NewWriter(b *blob.Store, o Options) *Writer {
	if o.MaxAge <= 0 {
		o.MaxAge = 2 * time.Second
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = 8 << 20
	}
	return &Writer{blob: b, o: o, cur: map[string]*pending{}, started: time.Now().UTC().Format("20060102T150405.000000000")}
}

// Add compresses data into group's current segment and returns its reference and a wait
// that returns once the segment holding it is stored (or failed to be). Nothing may refer to
// the item durably — a database row — before wait returns nil.
func (w *Writer) Add(group string, data []byte) (ref string, wait func(context.Context) error, err error) {
	if strings.Contains(group, "/") {
		return "", nil, fmt.Errorf("segment: group %q holds a slash", group)
	}
	// (spliceable: an archive copies a body's stream into its record instead of compressing
	// it again, gz.WriteSpliced)
	member, err := gz.CompressSpliceable(data)
	if err != nil {
		return "", nil, fmt.Errorf("segment: compress: %w", err)
	}
	w.mu.Lock()
	p := w.cur[group]
	if p == nil {
		w.seq++
		p = &pending{group: group, key: w.key(group), done: make(chan struct{})}
		w.cur[group] = p
		p.timer = time.AfterFunc(w.o.MaxAge, func() { w.flush(p) })
	}
	off := p.buf.Len()
	p.buf.Write(member)
	full := p.buf.Len() >= w.o.MaxBytes
	w.mu.Unlock()
	if full {
		go w.flush(p)
	}
	ref = Ref(p.key, int64(off), int64(len(member)))
	return ref, func(ctx context.Context) error {
		select {
		case <-p.done:
			return p.err
		case <-ctx.Done():
			return ctx.Err()
		}
	}, nil
}

// key names the next segment of group (w.mu held).
func (w *Writer) key(group string) string {
	return fmt.Sprintf("%s%s/%s-%s-%06d.gz", GroupPrefix(w.o.Prefix, group), w.started[:8], w.o.Name, w.started, w.seq)
}

// GroupPrefix is where a writer with prefix stores group's segments: everything under it
// belongs to that group alone.
func GroupPrefix(prefix, group string) string { return prefix + "/crawl=" + group + "/" }

// flush stores segment p if it is still the one being filled.
func (w *Writer) flush(p *pending) {
	w.mu.Lock()
	if w.cur[p.group] != p {
		w.mu.Unlock()
		return
	}
	p.timer.Stop()
	delete(w.cur, p.group)
	data := p.buf.Bytes()
	w.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p.err = w.blob.Put(ctx, p.key, data, "application/gzip")
	p.buf = bytes.Buffer{}
	close(p.done)
}

// Flush stores the segments being filled now (at shutdown, or in tests).
func (w *Writer) Flush() {
	w.mu.Lock()
	ps := make([]*pending, 0, len(w.cur))
	for _, p := range w.cur {
		ps = append(ps, p)
	}
	w.mu.Unlock()
	for _, p := range ps {
		w.flush(p)
		<-p.done
	}
}
