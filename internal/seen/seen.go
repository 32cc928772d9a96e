// Package seen owns the per-process Bloom filter in front of the Postgres seen-set. Postgres
// stays the truth: the filter only remembers URLs this process has seen admitted or offered,
// so that in approximate mode a link it has surely met before skips the database. In exact
// mode (the default) it only counts, and every candidate goes to Postgres.
package seen

import (
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
