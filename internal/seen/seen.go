// Package seen owns the per-process Bloom filter in front of the Postgres seen-set. Postgres
// stays the truth: the filter only remembers URLs this process has seen admitted or offered,
// so that in approximate mode a link it has surely met before skips the database. In exact
// mode (the default) a process has no filter (a nil *Filter), and every candidate goes to
// Postgres.
package seen

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/bits-and-blooms/bloom/v3"
)

// Filter is a concurrency-safe Bloom filter of (crawl, URL hash) keys.
type Filter struct {
	mu          sync.RWMutex
	bf          *bloom.BloomFilter
	approximate bool
	hits        atomic.Int64
}

// New sizes a filter for n keys at false-positive rate fp. In approximate mode Seen answers
// true for keys probably added before, and callers drop those candidates.
func New(n uint, fp float64, approximate bool) *Filter {
	return &Filter{bf: bloom.NewWithEstimates(n, fp), approximate: approximate}
}

func key(crawlID string, hash []byte) []byte {
	k := make([]byte, 0, len(crawlID)+1+len(hash))
	k = append(k, crawlID...)
	k = append(k, 0)
	return append(k, hash...)
}

// Skip reports whether a candidate may skip the database: only in approximate mode, and only
// if the filter has probably seen it.
func (f *Filter) Skip(crawlID string, hash []byte) bool {
	if f == nil || !f.approximate {
		return false
	}
	f.mu.RLock()
	hit := f.bf.Test(key(crawlID, hash))
	f.mu.RUnlock()
	if hit {
		f.hits.Add(1)
	}
	return hit
}

// Add remembers keys that are now in Postgres.
func (f *Filter) Add(crawlID string, hashes [][]byte) {
	if f == nil {
		return
	}
	f.mu.Lock()
	for _, h := range hashes {
		f.bf.Add(key(crawlID, h))
	}
	f.mu.Unlock()
}

// Hits counts candidates that skipped the database.
func (f *Filter) Hits() int64 {
	if f == nil {
		return 0
	}
	return f.hits.Load()
}

// Rows is what Rebuild reads: (crawl ID, URL hash) pairs, e.g. streamed from Postgres.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// Rebuild adds every (crawl, hash) pair of rows and returns how many it read.
func (f *Filter) Rebuild(rows Rows) (int, error) {
	n := 0
	var crawlID string
	var hash []byte
	f.mu.Lock()
	defer f.mu.Unlock()
	for rows.Next() {
		if err := rows.Scan(&crawlID, &hash); err != nil {
			return n, err
		}
		f.bf.Add(key(crawlID, hash))
		n++
	}
	return n, rows.Err()
}

// WriteTo writes a snapshot of the filter (for a faster start of other workers).
func (f *Filter) WriteTo(w io.Writer) (int64, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.bf.WriteTo(w)
}

// ReadFrom merges a snapshot written by WriteTo into the filter (same size and hash count).
func (f *Filter) ReadFrom(r io.Reader) (int64, error) {
	snap := &bloom.BloomFilter{}
	n, err := snap.ReadFrom(r)
	if err != nil {
		return n, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.bf.Merge(snap); err != nil {
		return n, fmt.Errorf("seen: snapshot does not fit this filter (sized differently?): %w", err)
	}
	return n, nil
}
