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

// Borrowed is a crawl whose stored bodies another crawl points at: how many, and whether
// the crawl itself is gone (deleted; its bodies stay while others point at them).
type Borrowed struct {
	Crawl  string
	Bodies int64
	Gone   bool
}

// BorrowedFrom counts, per crawl, the bodies crawlID points at that another crawl stored
// (spec.dedupAgainst): its revisits of those need that crawl's WARC files to replay, or a
// package that carries the bodies itself (BorrowedBodies).
func (agg Documents) BorrowedFrom(ctx context.Context, crawlID string) ([]Borrowed, error) {
	s := agg.s
	rows, err := s.pool.Query(ctx, `SELECT p.owner_crawl, count(*), bool_and(c.id IS NULL) FROM payloads p
		LEFT JOIN crawls c ON c.id = p.owner_crawl
		WHERE p.crawl_id = $1 AND p.owner_crawl <> $1
		GROUP BY p.owner_crawl ORDER BY 2 DESC, 1`, crawlID)
	if err != nil {
		return nil, fmt.Errorf("store: bodies %s borrowed: %w", crawlID, err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByPos[Borrowed])
	if err != nil {
		return nil, fmt.Errorf("store: bodies %s borrowed: %w", crawlID, err)
	}
	return out, nil
}

// BorrowedBody is a body a crawl's revisits borrow from another crawl: the capture of that
// crawl which stored it (what the revisits refer to), where the bytes are, and the head this
// crawl got with them, so a package can carry the response its revisits resolve to.
type BorrowedBody struct {
	Owner        string
	URL          string
	FetchedAt    time.Time
	ContentHash  []byte
	BodyKey      string
	ContentType  string
	ResponseHead string
}

// BorrowedBodies returns up to limit bodies crawlID's captures borrow from other crawls, in
// digest order after digest after (nil: from the first).
func (agg Documents) BorrowedBodies(ctx context.Context, crawlID string, after []byte, limit int) ([]BorrowedBody, error) {
	s := agg.s
	if after == nil {
		after = []byte{}
	}
	// The head comes from one of this crawl's own 2xx of those bytes: the owner's rows may be
	// deleted, and a revisit resolves to the payload, its headers being the revisit's own
	// (none found: a plain 200 of the type recorded with the body is written).
	rows, err := s.pool.Query(ctx, `SELECT p.owner_crawl, p.url, p.fetched_at, p.content_hash, p.body_key,
			coalesce(h.content_type, ''), coalesce(h.response_head, ''::bytea)
		FROM payloads p
		LEFT JOIN LATERAL (SELECT f.content_type, f.response_head FROM fetches f
			WHERE f.crawl_id = p.crawl_id AND f.content_hash = p.content_hash AND f.body_key = p.body_key AND f.status BETWEEN 200 AND 299
			ORDER BY f.id LIMIT 1) h ON true
		WHERE p.crawl_id = $1 AND p.owner_crawl <> $1 AND p.content_hash > $2
		ORDER BY p.content_hash LIMIT $3`, crawlID, after, limit)
	if err != nil {
		return nil, fmt.Errorf("store: bodies %s borrowed: %w", crawlID, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (BorrowedBody, error) {
		var b BorrowedBody
		var head []byte
		err := r.Scan(&b.Owner, &b.URL, &b.FetchedAt, &b.ContentHash, &b.BodyKey, &b.ContentType, &head)
		b.ResponseHead = string(head)
		return b, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: bodies %s borrowed: %w", crawlID, err)
	}
	return out, nil
}
