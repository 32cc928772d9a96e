package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// payloadLock is the advisory lock between pointing a fetch at a stored payload and deleting a
// crawl: a finder holds it shared while it reads and files the payload, a delete holds it
// exclusively while it decides which segments stay. A finder therefore never hands out bytes a
// delete has already decided to remove.
const payloadLock = int64(0x7472_6177_6c70_6179) // "trawlpay"

// Payload is a stored body found by its digest: where it is, and the capture that stored it.
type Payload struct {
	BodyKey    string
	OwnerCrawl string // whose segments hold the bytes
	URL        string
	FetchedAt  time.Time
}

// FindPayload returns the stored body with digest hash that crawlID may point at instead of
// storing it again: its own, or one of the crawls in from ("*" in from: any crawl's), the
// crawl's own and then the oldest first. A payload found in another crawl is filed under
// crawlID too, so a delete of its owner keeps the bytes while crawlID points at them. What is
// returned is the row filed: when the crawl filed its own copy meanwhile (a fetch of the same
// bytes recorded since this statement's snapshot), that copy — never bytes no row protects.
func (agg Documents) FindPayload(ctx context.Context, crawlID string, from []string, hash []byte) (Payload, bool, error) {
	s := agg.s
	any := false
	for _, c := range from {
		any = any || c == "*"
	}
	// One batch is one implicit transaction: the shared lock, taken by the first statement,
	// holds until the second (with a snapshot of its own, taken after the lock) is done.
	b := &pgx.Batch{}
	b.Queue(`SELECT pg_advisory_xact_lock_shared($1)`, payloadLock)
	b.Queue(`WITH found AS (
			SELECT body_key, owner_crawl, url, fetched_at FROM payloads
			WHERE content_hash = $1 AND (crawl_id = $2 OR crawl_id = ANY($3) OR $4)
			ORDER BY crawl_id = $2 DESC, fetched_at LIMIT 1),
		filed AS (
			INSERT INTO payloads (content_hash, crawl_id, owner_crawl, body_key, url, fetched_at)
			SELECT $1, $2, owner_crawl, body_key, url, fetched_at FROM found
			ON CONFLICT (content_hash, crawl_id) DO UPDATE SET owner_crawl = payloads.owner_crawl
			RETURNING body_key, owner_crawl, url, fetched_at)
		SELECT body_key, owner_crawl, url, fetched_at FROM filed`, hash, crawlID, from, any)
	br := s.pool.SendBatch(ctx, b)
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		return Payload{}, false, fmt.Errorf("store: find payload: %w", err)
	}
	var p Payload
	err := br.QueryRow().Scan(&p.BodyKey, &p.OwnerCrawl, &p.URL, &p.FetchedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Payload{}, false, br.Close()
	}
	if err != nil {
		return Payload{}, false, fmt.Errorf("store: find payload: %w", err)
	}
	return p, true, br.Close()
}

// BorrowedFrom counts, per crawl, the bodies crawlID points at that another crawl stored
// (spec.dedupAgainst): its revisits of those need that crawl's WARC files to replay.
func (agg Documents) BorrowedFrom(ctx context.Context, crawlID string) ([]Count, error) {
	s := agg.s
	rows, err := s.pool.Query(ctx, `SELECT owner_crawl, count(*) FROM payloads WHERE crawl_id = $1 AND owner_crawl <> $1
		GROUP BY owner_crawl ORDER BY 2 DESC, 1`, crawlID)
	if err != nil {
		return nil, fmt.Errorf("store: bodies %s borrowed: %w", crawlID, err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByPos[Count])
	if err != nil {
		return nil, fmt.Errorf("store: bodies %s borrowed: %w", crawlID, err)
	}
	return out, nil
}
