package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/trawlerdev/trawler/internal/crawl"
)

// Cursor is a place in a crawl's documents in the order their saves committed: the saving
// transaction's ID (xid8, as decimal text) and the URL hash. The zero Cursor is before all.
type Cursor struct {
	Tx   string `json:"tx"`
	Hash []byte `json:"hash"`
}

func (c Cursor) tx() string {
	if c.Tx == "" {
		return "0"
	}
	return c.Tx
}

func (c Cursor) hash() []byte {
	if c.Hash == nil {
		return []byte{}
	}
	return c.Hash
}

// Same says whether two cursors stand at the same place.
func (c Cursor) Same(o Cursor) bool { return c.tx() == o.tx() && string(c.Hash) == string(o.Hash) }

// DeliveredPage is a stored page as an output delivers it: the record's fields and where it
// stands in the save order.
type DeliveredPage struct {
	StoredPage
	At Cursor
}

// deliverPagesSQL reads up to $6 documents of crawl $1 after cursor ($2, $3) in save order, up
// to cursor ($4, $5) when $4 is set, with the fields of their record (as storedPagesSQL).
// Only transactions older than every one still running are read (pg_snapshot_xmin): a save
// in flight may commit after a later one, and the cursor must never pass it.
const deliverPagesSQL = `WITH batch AS (
		SELECT q.crawl_id, q.url_hash, q.stored_tx FROM delivery_queue q
		JOIN documents d ON d.crawl_id = q.crawl_id AND d.url_hash = q.url_hash AND d.stored_tx = q.stored_tx -- (not superseded)
		WHERE q.crawl_id = $1 AND (q.crawl_id, q.stored_tx, q.url_hash) > ($1::text, $2::xid8, $3::bytea)
			AND ($4::xid8 IS NULL OR (q.stored_tx, q.url_hash) <= ($4::xid8, $5::bytea))
			AND q.stored_tx < pg_snapshot_xmin(pg_current_snapshot())
		ORDER BY q.crawl_id, q.stored_tx, q.url_hash LIMIT $6)
	SELECT b.stored_tx::text, u.url_hash, u.url, coalesce(f.final_url, ''), coalesce(f.status, 0), coalesce(f.fetched_at, d.processed_at),
		coalesce(f.content_type, d.content_type, ''), d.content_hash, coalesce(d.title, ''), coalesce(d.lang, ''), coalesce(d.text_key, ''),
		coalesce(du.url, ''), coalesce(f.w_file, ''), coalesce(f.w_offset, 0), coalesce(f.w_length, 0),
		coalesce((SELECT array_agg(t.url ORDER BY t.url) FROM unnest(d.link_to, d.link_kind) AS l(h, k)
			JOIN urls t ON t.crawl_id = d.crawl_id AND t.url_hash = l.h WHERE l.k <> 'embed'), '{}'),
		coalesce(d.extract::text, '')
	FROM batch b
	JOIN documents d ON d.crawl_id = b.crawl_id AND d.url_hash = b.url_hash
	JOIN urls u ON u.crawl_id = b.crawl_id AND u.url_hash = b.url_hash
	LEFT JOIN LATERAL (SELECT f.*, wp.warc_file AS w_file, wp.warc_offset AS w_offset, wp.warc_length AS w_length
		FROM fetches f LEFT JOIN warc_placements wp ON wp.fetch_id = f.id -- (in here: one probe a page, whatever the plan outside)
		WHERE f.crawl_id = u.crawl_id AND f.url_hash = u.url_hash AND f.body_key IS NOT NULL
		ORDER BY f.fetched_at DESC, f.id DESC LIMIT 1) f ON true
	LEFT JOIN urls du ON du.crawl_id = d.crawl_id AND du.url_hash = d.dup_of
	ORDER BY b.stored_tx, b.url_hash`

// Pages returns up to limit of a crawl's documents after cursor after, in save order, up to
// and including upTo when it is set (a dead-lettered batch's range).
func (agg Deliveries) Pages(ctx context.Context, crawlID string, after Cursor, upTo *Cursor, limit int) ([]DeliveredPage, error) {
	s := agg.s
	var toTx *string
	var toHash []byte
	if upTo != nil {
		t := upTo.tx()
		toTx, toHash = &t, upTo.hash()
	}
	rows, err := s.pool.Query(ctx, deliverPagesSQL, crawlID, after.tx(), after.hash(), toTx, toHash, limit)
	if err != nil {
		return nil, fmt.Errorf("store: documents of %s to deliver: %w", crawlID, err)
	}
	pages, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (DeliveredPage, error) {
		var p DeliveredPage
		err := r.Scan(&p.At.Tx, &p.Hash, &p.URL, &p.FinalURL, &p.Status, &p.FetchedAt, &p.ContentType, &p.ContentHash, &p.Title, &p.Lang,
			&p.TextKey, &p.DuplicateOf, &p.WARCFile, &p.WARCOffset, &p.WARCBytes, &p.Links, &p.Extract)
		p.At.Hash = p.Hash
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: documents of %s to deliver: %w", crawlID, err)
	}
	return pages, nil
}

// Position is where the crawl's output stands (its row made on first use), and how many
// tries of the batch there have failed.
func (agg Deliveries) Position(ctx context.Context, crawlID, output string) (Cursor, int, error) {
	s := agg.s
	var c Cursor
	var tries int
	err := s.pool.QueryRow(ctx, `WITH made AS (
			INSERT INTO deliveries (crawl_id, output) SELECT $1, $2 WHERE EXISTS (SELECT 1 FROM crawls WHERE id = $1)
			ON CONFLICT DO NOTHING RETURNING cursor_tx::text, cursor_hash, tries)
		SELECT * FROM made UNION ALL SELECT cursor_tx::text, cursor_hash, tries FROM deliveries WHERE crawl_id = $1 AND output = $2`,
		crawlID, output).Scan(&c.Tx, &c.Hash, &tries)
	if errors.Is(err, pgx.ErrNoRows) {
		return Cursor{}, 0, ErrNoCrawl
	}
	if err != nil {
		return Cursor{}, 0, fmt.Errorf("store: delivery %s/%s: %w", crawlID, output, err)
	}
	return c, tries, nil
}

// Ended says whether nothing more can come after cursor at: the crawl is done (nothing was
// pending), or stopped at least settle ago (the requests in flight at the stop landed); no
// fetched page of it waits for processing; and no document of it is after the cursor,
// committed or not yet visible.
func (agg Deliveries) Ended(ctx context.Context, crawlID string, at Cursor, settle time.Duration) (bool, error) {
	s := agg.s
	var ended bool
	err := s.pool.QueryRow(ctx, `SELECT (c.state = 'done' OR c.state = 'stopped' AND c.finished_at < now() - $4::interval)
			AND NOT EXISTS (SELECT 1 FROM urls u WHERE u.crawl_id = $1 AND u.state = 'fetched')
			AND NOT EXISTS (SELECT 1 FROM delivery_queue q WHERE q.crawl_id = $1 AND (q.crawl_id, q.stored_tx, q.url_hash) > ($1::text, $2::xid8, $3::bytea))
		FROM crawls c WHERE c.id = $1`, crawlID, at.tx(), at.hash(), settle).Scan(&ended)
	if errors.Is(err, pgx.ErrNoRows) {
		return true, nil // deleted: nothing comes
	}
	if err != nil {
		return false, fmt.Errorf("store: has crawl %s ended: %w", crawlID, err)
	}
	return ended, nil
}

// Advance moves the output's cursor from from to to after a batch of records was delivered.
// It says false when the cursor stood elsewhere (another attempt moved it first): nothing is
// counted then.
func (agg Deliveries) Advance(ctx context.Context, crawlID, output string, from, to Cursor, records int) (bool, error) {
	s := agg.s
	tag, err := s.pool.Exec(ctx, `UPDATE deliveries SET cursor_tx = $3::xid8, cursor_hash = $4, records = records + $5,
			batches = batches + 1, tries = 0, last_error = NULL, updated_at = now()
		WHERE crawl_id = $1 AND output = $2 AND cursor_tx = $6::xid8 AND cursor_hash = $7`,
		crawlID, output, to.tx(), to.hash(), records, from.tx(), from.hash())
	if err != nil {
		return false, fmt.Errorf("store: advance delivery %s/%s: %w", crawlID, output, err)
	}
	return tag.RowsAffected() == 1, nil
}

// Counted adds a replayed batch's records to the output's delivered count.
func (agg Deliveries) Counted(ctx context.Context, crawlID, output string, records int) error {
	s := agg.s
	_, err := s.pool.Exec(ctx, `UPDATE deliveries SET records = records + $3, batches = batches + 1, updated_at = now()
		WHERE crawl_id = $1 AND output = $2`, crawlID, output, records)
	if err != nil {
		return fmt.Errorf("store: count delivery %s/%s: %w", crawlID, output, err)
	}
	return nil
}

// Failed records a failed try of the batch at cursor at (when the cursor still stands there)
// with its error (clipped: a receiver writes part of it), and returns the batch's failed tries.
func (agg Deliveries) Failed(ctx context.Context, crawlID, output string, at Cursor, why string) (int, error) {
	s := agg.s
	var tries int
	err := s.pool.QueryRow(ctx, `UPDATE deliveries SET tries = tries + 1, last_error = $5, updated_at = now()
		WHERE crawl_id = $1 AND output = $2 AND cursor_tx = $3::xid8 AND cursor_hash = $4 RETURNING tries`,
		crawlID, output, at.tx(), at.hash(), Text(crawl.ClipError(why))).Scan(&tries)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil // the cursor moved on: another try delivered it
	}
	if err != nil {
		return 0, fmt.Errorf("store: record delivery failure %s/%s: %w", crawlID, output, err)
	}
	return tries, nil
}

// DeadBatch is a dead-lettered batch: the documents after From up to To, in save order.
type DeadBatch struct {
	ID       int64
	From, To Cursor
	Records  int
	Attempts int
	Error    string
	At       time.Time
}

// DeadLetter records a batch every try of which failed and moves the cursor past it (when it
// stands at the batch's start), in one transaction: a retry records it once.
func (agg Deliveries) DeadLetter(ctx context.Context, crawlID, output string, b DeadBatch) error {
	s := agg.s
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO delivery_dead_letters (crawl_id, output, from_tx, from_hash, to_tx, to_hash, records, attempts, error)
			VALUES ($1, $2, $3::xid8, $4, $5::xid8, $6, $7, $8, $9) ON CONFLICT DO NOTHING`,
			crawlID, output, b.From.tx(), b.From.hash(), b.To.tx(), b.To.hash(), b.Records, b.Attempts, Text(crawl.ClipError(b.Error)))
		if err != nil || tag.RowsAffected() == 0 {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE deliveries SET cursor_tx = $3::xid8, cursor_hash = $4, dead = dead + $5, tries = 0, last_error = $6, updated_at = now()
			WHERE crawl_id = $1 AND output = $2 AND cursor_tx = $7::xid8 AND cursor_hash = $8`,
			crawlID, output, b.To.tx(), b.To.hash(), b.Records, Text(crawl.ClipError(b.Error)), b.From.tx(), b.From.hash())
		return err
	})
	if err != nil {
		return fmt.Errorf("store: dead-letter a batch of %s/%s: %w", crawlID, output, err)
	}
	return nil
}

// DeadBatches are the output's dead-lettered batches not sent again yet, oldest first.
func (agg Deliveries) DeadBatches(ctx context.Context, crawlID, output string, limit int) ([]DeadBatch, error) {
	s := agg.s
	rows, err := s.pool.Query(ctx, `SELECT id, from_tx::text, from_hash, to_tx::text, to_hash, records, attempts, error, at
		FROM delivery_dead_letters WHERE crawl_id = $1 AND output = $2 AND replayed_at IS NULL ORDER BY id LIMIT $3`, crawlID, output, limit)
	if err != nil {
		return nil, fmt.Errorf("store: dead batches of %s/%s: %w", crawlID, output, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (DeadBatch, error) {
		var b DeadBatch
		err := r.Scan(&b.ID, &b.From.Tx, &b.From.Hash, &b.To.Tx, &b.To.Hash, &b.Records, &b.Attempts, &b.Error, &b.At)
		return b, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: dead batches of %s/%s: %w", crawlID, output, err)
	}
	return out, nil
}

// Replayed marks a dead-lettered batch sent again, and takes its records off the dead count.
func (agg Deliveries) Replayed(ctx context.Context, crawlID, output string, id int64) error {
	s := agg.s
	_, err := s.pool.Exec(ctx, `WITH r AS (UPDATE delivery_dead_letters SET replayed_at = now()
			WHERE id = $3 AND crawl_id = $1 AND output = $2 AND replayed_at IS NULL RETURNING records)
		UPDATE deliveries SET dead = greatest(dead - (SELECT coalesce(sum(records), 0) FROM r), 0), updated_at = now()
		WHERE crawl_id = $1 AND output = $2`, crawlID, output, id)
	if err != nil {
		return fmt.Errorf("store: mark a dead batch of %s/%s replayed: %w", crawlID, output, err)
	}
	return nil
}

// ReplayFailed records a failed try of sending a dead-lettered batch again: it stays dead.
func (agg Deliveries) ReplayFailed(ctx context.Context, crawlID, output string, id int64, why string) error {
	s := agg.s
	_, err := s.pool.Exec(ctx, `UPDATE delivery_dead_letters SET attempts = attempts + 1, error = $4
		WHERE id = $3 AND crawl_id = $1 AND output = $2`, crawlID, output, id, Text(crawl.ClipError(why)))
	if err != nil {
		return fmt.Errorf("store: record a failed replay of %s/%s: %w", crawlID, output, err)
	}
	return nil
}

// DeliveryStatus is an output's standing, for the report and `trawler status`.
type DeliveryStatus struct {
	Output      string    `json:"output"`
	Records     int64     `json:"records"`
	Batches     int64     `json:"batches"`
	Dead        int64     `json:"dead"`        // records in batches dead-lettered and not sent again
	DeadBatches int64     `json:"deadBatches"` // such batches
	Behind      int64     `json:"behind"`      // documents after the cursor
	LastError   string    `json:"lastError,omitempty"`
	UpdatedAt   time.Time `json:"updatedAt"`
}

// Statuses are the crawl's outputs' standings, by name.
func (agg Deliveries) Statuses(ctx context.Context, crawlID string) ([]DeliveryStatus, error) {
	s := agg.s
	rows, err := s.pool.Query(ctx, `SELECT v.output, v.records, v.batches, v.dead,
			(SELECT count(*) FROM delivery_dead_letters x WHERE x.crawl_id = v.crawl_id AND x.output = v.output AND x.replayed_at IS NULL),
			(SELECT count(*) FROM delivery_queue q JOIN documents d ON d.crawl_id = q.crawl_id AND d.url_hash = q.url_hash AND d.stored_tx = q.stored_tx
				WHERE q.crawl_id = v.crawl_id AND (q.crawl_id, q.stored_tx, q.url_hash) > (v.crawl_id, v.cursor_tx, v.cursor_hash)),
			coalesce(v.last_error, ''), v.updated_at
		FROM deliveries v WHERE v.crawl_id = $1 ORDER BY v.output`, crawlID)
	if err != nil {
		return nil, fmt.Errorf("store: deliveries of %s: %w", crawlID, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (DeliveryStatus, error) {
		var d DeliveryStatus
		err := r.Scan(&d.Output, &d.Records, &d.Batches, &d.Dead, &d.DeadBatches, &d.Behind, &d.LastError, &d.UpdatedAt)
		return d, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: deliveries of %s: %w", crawlID, err)
	}
	return out, nil
}
