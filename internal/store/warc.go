package store

import (
	"context"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/trawlerdev/trawler/internal/crawl"
)

// Capture is a fetch that got an HTTP answer, as a WARC writer needs it.
type Capture struct {
	ID                        int64
	FetchKey, URL             string
	FetchedAt                 time.Time
	Status                    int
	ContentType, BodyKey      string
	ContentHash               []byte
	Truncated                 bool
	RequestHead, ResponseHead string
	// The earlier capture whose payload this one repeats (an identical body fetched before, in
	// this crawl or in one it deduplicates against, or for a 304 the URL's last body): a revisit
	// record refers to it. A body borrowed from another crawl refers to that crawl's capture,
	// the response that holds it, never to a revisit of it. RefersToURL is empty when none;
	// RefersToID is zero for another crawl's capture.
	RefersToID   int64
	RefersToURL  string
	RefersToDate time.Time
	RefersToHash []byte
}

// Unarchived returns up to limit captures of a crawl not yet in a WARC file, in fetch order,
// after fetch id afterID. The waiting list is cut to the batch before anything joins it: with
// only the list bounded, the planner merge-joined fetches from their first row (schema 0046).
func (agg Archive) Unarchived(ctx context.Context, crawlID string, afterID int64, limit int) ([]Capture, error) {
	s := agg.s
	rows, err := s.pool.Query(ctx, `SELECT f.id, f.fetch_key, u.url, f.fetched_at, f.status, coalesce(f.content_type, ''),
			coalesce(f.body_key, ''), f.content_hash, f.truncated, coalesce(f.request_head, ''::bytea), coalesce(f.response_head, ''::bytea),
			CASE WHEN x.url IS NULL THEN coalesce(r.id, 0) ELSE 0 END, coalesce(x.url, r.url, ''),
			coalesce(x.fetched_at, r.fetched_at, 'epoch'), coalesce(x.content_hash, r.content_hash)
		FROM (SELECT fetch_id FROM warc_pending WHERE crawl_id = $1 AND fetch_id > $2 ORDER BY fetch_id LIMIT $3) w
		JOIN fetches f ON f.id = w.fetch_id
		JOIN urls u ON u.crawl_id = f.crawl_id AND u.url_hash = f.url_hash
		LEFT JOIN LATERAL (
			SELECT p.id, pu.url, p.fetched_at, p.content_hash FROM fetches p JOIN urls pu ON pu.crawl_id = p.crawl_id AND pu.url_hash = p.url_hash
			WHERE p.crawl_id = f.crawl_id AND p.body_key IS NOT NULL AND p.id < f.id AND (
				(f.status = 304 AND p.url_hash = f.url_hash) OR (f.body_key IS NOT NULL AND p.content_hash = f.content_hash))
			ORDER BY CASE WHEN f.status = 304 THEN -p.id ELSE p.id END LIMIT 1) r ON true
		LEFT JOIN payloads x ON x.content_hash = f.content_hash AND x.crawl_id = f.crawl_id AND x.owner_crawl <> f.crawl_id
			AND x.body_key = f.body_key
		ORDER BY w.fetch_id`, crawlID, afterID, limit)
	if err != nil {
		return nil, fmt.Errorf("store: unarchived captures of %s: %w", crawlID, err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Capture, error) {
		var c Capture
		var reqHead, respHead []byte
		err := r.Scan(&c.ID, &c.FetchKey, &c.URL, &c.FetchedAt, &c.Status, &c.ContentType, &c.BodyKey, &c.ContentHash,
			&c.Truncated, &reqHead, &respHead, &c.RefersToID, &c.RefersToURL, &c.RefersToDate, &c.RefersToHash)
		c.RequestHead, c.ResponseHead = string(reqHead), string(respHead)
		return c, err
	})
}

// OldestUnarchived is when the crawl's oldest capture not yet in a WARC file was fetched
// (zero: none), and how many body bytes wait: read from the waiting list alone, which carries
// both (schema 0046).
func (agg Archive) OldestUnarchived(ctx context.Context, crawlID string) (time.Time, int64, error) {
	s := agg.s
	var t *time.Time
	var n int64
	err := s.pool.QueryRow(ctx, `SELECT min(fetched_at), coalesce(sum(bytes), 0) FROM warc_pending WHERE crawl_id = $1`,
		crawlID).Scan(&t, &n)
	if err != nil {
		return time.Time{}, 0, fmt.Errorf("store: unarchived captures of %s: %w", crawlID, err)
	}
	if t == nil {
		return time.Time{}, 0, nil
	}
	return *t, n, nil
}

// WARCFile is a finished WARC file and where its captures' records are.
type WARCFile struct {
	CrawlID, Name, CDXKey string
	Records               int
	Bytes                 int64
	FirstID, LastID       int64
	Placed                []Placed
}

// Placed is the offset and compressed length of a capture's response or revisit record.
type Placed struct {
	ID             int64
	Offset, Length int64
}

// SaveWARCFile records an uploaded WARC file, where each of its captures' records sits, and
// that they wait no more. A capture's fetches row is not rewritten (schema 0046): its
// placement is a row of its own, written when its file is saved (a file saved again after a
// retry moves it). The save holds its crawl's row (KEY SHARE) from its first statement, and
// refuses a crawl released for deletion: a deletion locks that row before it deletes any
// placement (DeleteCrawlRows), so a save either commits before the deletion reads the
// crawl's placements or fails, and never leaves a placement behind its deleted fetch.
func (agg Archive) SaveWARCFile(ctx context.Context, f WARCFile) error {
	s := agg.s
	ids, offs, lens := make([]int64, len(f.Placed)), make([]int64, len(f.Placed)), make([]int64, len(f.Placed))
	for i, p := range f.Placed {
		ids[i], offs[i], lens[i] = p.ID, p.Offset, p.Length
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// (The foreign key's own check locks the crawl only for a new file's row, not for a
		// retried save's update of it: hence the explicit lock.)
		tag, err := tx.Exec(ctx, `INSERT INTO warc_files (crawl_id, name, cdx_key, records, bytes, first_id, last_id)
			SELECT id, $2, $3, $4, $5, $6, $7 FROM crawls WHERE id = $1 AND state <> $8 FOR KEY SHARE
			ON CONFLICT (crawl_id, name) DO UPDATE SET cdx_key = excluded.cdx_key, records = excluded.records,
				bytes = excluded.bytes, last_id = excluded.last_id, created_at = now()`,
			f.CrawlID, f.Name, f.CDXKey, f.Records, f.Bytes, f.FirstID, f.LastID, crawl.CrawlDeleting)
		if err != nil {
			return fmt.Errorf("insert warc file: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("crawl %s is gone or being deleted: %w", f.CrawlID, ErrNoCrawl)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO warc_placements (fetch_id, warc_file, warc_offset, warc_length)
			SELECT p.id, $1, p.o, p.l FROM unnest($2::bigint[], $3::bigint[], $4::bigint[]) AS p(id, o, l)
			ON CONFLICT (fetch_id) DO UPDATE SET warc_file = excluded.warc_file, warc_offset = excluded.warc_offset,
				warc_length = excluded.warc_length`, f.Name, ids, offs, lens); err != nil {
			return fmt.Errorf("place captures: %w", err)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM warc_pending WHERE crawl_id = $1 AND fetch_id = ANY($2::bigint[])`,
			f.CrawlID, ids); err != nil {
			return fmt.Errorf("captures placed: %w", err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: save WARC file %s: %w", f.Name, err)
	}
	return nil
}

// WARCFiles lists a crawl's WARC files in order.
func (agg Archive) WARCFiles(ctx context.Context, crawlID string) ([]WARCFile, error) {
	s := agg.s
	rows, err := s.pool.Query(ctx, `SELECT crawl_id, name, cdx_key, records, bytes, first_id, last_id FROM warc_files
		WHERE crawl_id = $1 ORDER BY first_id`, crawlID)
	if err != nil {
		return nil, fmt.Errorf("store: WARC files of %s: %w", crawlID, err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (WARCFile, error) {
		var f WARCFile
		err := r.Scan(&f.CrawlID, &f.Name, &f.CDXKey, &f.Records, &f.Bytes, &f.FirstID, &f.LastID)
		return f, err
	})
}

// LockArchive takes the crawl's archive lock on a connection of its own, so one writer at a
// time appends a crawl's records; ok is false when another holds it. Call release when done.
func (agg Archive) LockArchive(ctx context.Context, crawlID string) (release func(), ok bool, err error) {
	s := agg.s
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("store: archive lock: %w", err)
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte("warc/" + crawlID))
	key := int64(h.Sum64())
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, key).Scan(&ok); err != nil || !ok {
		conn.Release()
		return nil, false, err
	}
	return func() { unlock(conn, key) }, true, nil
}

func unlock(conn *pgxpool.Conn, key int64) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_unlock($1)`, key); err != nil {
		_ = conn.Conn().Close(ctx) // closing the session drops its locks
	}
	conn.Release()
}

// CaptureLoc is where one capture of a URL is archived.
type CaptureLoc struct {
	URL            string    `json:"url"`
	FetchedAt      time.Time `json:"fetchedAt"`
	Status         int       `json:"status"`
	File           string    `json:"file"`
	Offset, Length int64     `json:"-"`
}

// CapturesOf lists the archived captures of one URL of a crawl, oldest first.
func (agg Archive) CapturesOf(ctx context.Context, crawlID string, urlHash []byte) ([]CaptureLoc, error) {
	s := agg.s
	rows, err := s.pool.Query(ctx, `SELECT u.url, f.fetched_at, f.status, p.warc_file, p.warc_offset, p.warc_length
		FROM fetches f JOIN urls u USING (crawl_id, url_hash) JOIN warc_placements p ON p.fetch_id = f.id
		WHERE f.crawl_id = $1 AND f.url_hash = $2 ORDER BY f.fetched_at`, crawlID, urlHash)
	if err != nil {
		return nil, fmt.Errorf("store: captures: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (CaptureLoc, error) {
		var c CaptureLoc
		err := r.Scan(&c.URL, &c.FetchedAt, &c.Status, &c.File, &c.Offset, &c.Length)
		return c, err
	})
}
