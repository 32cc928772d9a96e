// Package retention deletes crawls — their rows, their segments and their WARC files — and
// sweeps away the crawls that ended longer ago than the retention setting. It never deletes
// bytes another crawl still points at: a segment holding a body a later crawl reuses
// (spec.dedupAgainst) stays until that crawl is deleted too.
package retention

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/trawlerdev/trawler/internal/blob"
	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/segment"
	"github.com/trawlerdev/trawler/internal/store"
)

// Segment prefixes a crawl's stored items lie under (segment.Writer groups by crawl).
var segmentPrefixes = []string{"segments/bodies", "segments/text", "segments/dom"}

// Plan is what deleting a crawl removes, or removed.
type Plan struct {
	Crawl   string           `json:"crawl"`
	Objects []string         `json:"objects"`          // removed from the bucket
	Kept    []string         `json:"kept,omitempty"`   // the crawl's segments other crawls point at
	Rows    map[string]int64 `json:"rows"`             // per table
	Legacy  int64            `json:"legacy,omitempty"` // items in shared segments from before per-crawl segments: left
	DryRun  bool             `json:"dryRun,omitempty"`
}

// Deleter deletes crawls from the store and the bucket.
type Deleter struct {
	Store *store.Store
	Blob  *blob.Store
	// Open reports whether a crawl's workflow still runs (nil: not asked). A stopped crawl's
	// workflow still writes its last WARC file and its processing ends: deleting before it
	// closes would leave what it writes behind.
	Open func(ctx context.Context, crawlID string) (bool, error)
}

// ErrNoSuchCrawl is returned for a crawl with neither rows nor objects.
var ErrNoSuchCrawl = errors.New("no such crawl")

// ErrStillClosing is returned for a stopped or done crawl whose workflow still runs.
var ErrStillClosing = errors.New("the crawl's workflow is still finishing (its last WARC file, its processing): try again in a minute")

// Delete removes a crawl that is not running: first it releases the crawl (store.ReleaseCrawl:
// from then no fetch can point at its bytes but those other crawls already do), then deletes
// its rows, then its objects, then forgets the objects it had noted. A delete cut short is
// finished by running it again, or by the next sweep. With dryRun it only says what it would
// remove.
func (d *Deleter) Delete(ctx context.Context, crawlID string, dryRun bool) (Plan, error) {
	p := Plan{Crawl: crawlID, DryRun: dryRun}
	exists, live, err := d.Store.Crawls().CrawlLive(ctx, crawlID)
	if err != nil {
		return p, err
	}
	if live {
		return p, fmt.Errorf("retention: crawl %s: %w", crawlID, store.ErrCrawlLive)
	}
	if !exists {
		// A name no crawl has may still find what a delete cut short left of one; but never
		// a name no crawl could have had, which is no crawl's prefix.
		if err := crawl.CheckID(crawlID); err != nil {
			return p, fmt.Errorf("retention: %w", err)
		}
	}
	if exists && d.Open != nil {
		open, err := d.Open(ctx, crawlID)
		if err != nil {
			return p, fmt.Errorf("retention: crawl %s: is its workflow closed? %w", crawlID, err)
		}
		if open {
			return p, fmt.Errorf("retention: crawl %s: %w", crawlID, ErrStillClosing)
		}
	}
	var paths []string
	for _, pre := range d.prefixes(crawlID) {
		paths = append(paths, pre.path)
	}
	if p.Legacy, err = d.Store.Deletes().LegacyRefs(ctx, crawlID, paths); err != nil {
		return p, err
	}
	var shared, pending []string
	if dryRun {
		if p.Rows, err = d.Store.Deletes().CrawlRows(ctx, crawlID); err != nil {
			return p, err
		}
		if shared, err = d.Store.Deletes().SharedBodies(ctx, crawlID); err != nil {
			return p, err
		}
		orphaned, err := d.Store.Deletes().OrphanedBodies(ctx, crawlID)
		if err != nil {
			return p, err
		}
		for _, ref := range orphaned {
			key, _, _, _ := segment.ParseRef(ref)
			pending = append(pending, key)
		}
	} else {
		if shared, err = d.Store.Deletes().ReleaseCrawl(ctx, crawlID); err != nil {
			return p, err
		}
		if p.Rows, err = d.Store.Deletes().DeleteCrawlRows(ctx, crawlID); err != nil {
			return p, err
		}
		if pending, err = d.Store.Deletes().PendingObjectDeletes(ctx, crawlID); err != nil {
			return p, err
		}
	}
	keep := map[string]bool{}
	for _, ref := range shared {
		key, _, _, _ := segment.ParseRef(ref)
		keep[key] = true
	}
	for _, prefix := range d.prefixes(crawlID) {
		keys, err := d.Blob.List(ctx, prefix.path)
		if err != nil {
			return p, fmt.Errorf("retention: list %s: %w", prefix.path, err)
		}
		for _, k := range keys {
			if strings.Count(k[len(prefix.path):], "/") != prefix.depth {
				continue // another crawl's, whose ID starts with this one's and a slash (made before IDs were checked)
			}
			if keep[k] {
				p.Kept = append(p.Kept, k)
			} else {
				p.Objects = append(p.Objects, k)
			}
		}
	}
	for _, key := range pending {
		if !slices.Contains(p.Objects, key) {
			p.Objects = append(p.Objects, key)
		}
	}
	if !exists && len(p.Objects) == 0 && len(p.Kept) == 0 && len(p.Rows) == 0 {
		return p, fmt.Errorf("retention: crawl %s: %w", crawlID, ErrNoSuchCrawl)
	}
	if dryRun || len(p.Objects) == 0 {
		return p, nil
	}
	if err := d.Blob.Delete(ctx, p.Objects); err != nil {
		return p, fmt.Errorf("retention: crawl %s: its rows are deleted, some objects not (run the delete again): %w", crawlID, err)
	}
	if err := d.Store.Deletes().ObjectsDeleted(ctx, pending); err != nil {
		return p, err
	}
	return p, nil
}

// prefix is where some of a crawl's objects lie, and how many folders down (segments by day).
type prefix struct {
	path  string
	depth int // slashes in a key after path
}

// prefixes are where a crawl's objects lie: its segments and its WARC files (with indexes).
func (d *Deleter) prefixes(crawlID string) []prefix {
	out := make([]prefix, 0, len(segmentPrefixes)+1)
	for _, p := range segmentPrefixes {
		out = append(out, prefix{segment.GroupPrefix(p, crawlID), 1})
	}
	return append(out, prefix{"warc/" + crawlID + "/", 0})
}

// Sweep deletes every crawl that ended (done or stopped) more than olderThan before now, oldest
// first, and returns what each delete removed. One crawl's failure does not stop the others.
func (d *Deleter) Sweep(ctx context.Context, olderThan time.Duration, now time.Time, dryRun bool) ([]Plan, error) {
	if olderThan <= 0 {
		return nil, errors.New("retention: the age must be positive")
	}
	ids, err := d.Store.Deletes().CrawlsFinishedBefore(ctx, now.Add(-olderThan))
	if err != nil {
		return nil, err
	}
	var plans []Plan
	var errs []error
	for _, id := range ids {
		p, err := d.Delete(ctx, id, dryRun)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		plans = append(plans, p)
	}
	return plans, errors.Join(errs...)
}
