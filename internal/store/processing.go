package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/trawlerdev/trawler/internal/crawl"
)

// ProcessingClaim is what a crawl's processing sees in one round trip: the crawl's state and
// the fetched pages it claimed.
type ProcessingClaim struct {
	CrawlState crawl.CrawlState // "" when the crawl does not exist
	Pages      []FetchedPage
	// Newest is when the newest page claimed began to wait for processing (zero: none), in
	// the database's clock: a later claim can read from there (ClaimFetched's from).
	Newest time.Time
}

// TakeBack names the held pages a claim takes back at once, whatever their hold: those any
// of Owners claimed more than Ago ago (with the claim's own hold: a claim's time is read from
// its hold's end). A retried processing run names its own lanes' owners and how long ago it
// began: what its dead predecessor held, and never what its running lanes hold now.
type TakeBack struct {
	Owners []string
	Ago    time.Duration
}

// ClaimFetched claims up to limit of a crawl's fetched pages for processing by owner, for hold
// (the oldest first, across hosts), and reads the crawl's state. Pages another owner holds
// are left alone until their hold expires, but for those back names (claimed, as a claim's
// hold says, with the same hold). Only pages that began to wait at from or later are read
// (zero: all): the oldest are those other claims hold, each read and passed over again by a
// claim from the start (issue 49), so a run claims from after the newest page it claimed
// while a backlog lasts.
func (agg Documents) ClaimFetched(ctx context.Context, crawlID, owner string, limit int, hold time.Duration, back TakeBack, from time.Time) (ProcessingClaim, error) {
	s := agg.s
	var pc ProcessingClaim
	b := &pgx.Batch{}
	b.Queue(`SELECT state FROM crawls WHERE id = $1`, crawlID)
	b.Queue(`WITH picked AS (
			SELECT crawl_id, url_hash FROM urls
			WHERE crawl_id = $1 AND state = 'fetched' AND updated_at >= $7
				AND (processing_until IS NULL OR processing_until < now()
					OR (processing_by = ANY($5) AND processing_until < now() + make_interval(secs => $4::float8 - $6::float8)))
			ORDER BY updated_at LIMIT $3 FOR UPDATE SKIP LOCKED),
		claimed AS (
			UPDATE urls u SET processing_by = $2, processing_until = now() + make_interval(secs => $4)
			FROM picked WHERE u.crawl_id = picked.crawl_id AND u.url_hash = picked.url_hash
			RETURNING u.crawl_id, u.url_hash, u.url, u.host, u.depth, u.recrawl_s, u.change_hint_s, u.body_key, u.updated_at)
		SELECT u.crawl_id, u.url_hash, u.url, u.host, u.depth, coalesce(f.final_url, ''), f.body_key,
			coalesce(f.content_type, ''), coalesce(f.robots_tag, ''), f.content_hash, coalesce(f.bytes, 0), f.changed, coalesce(u.recrawl_s, 0), coalesce(u.change_hint_s, 0),
			u.updated_at
		FROM claimed u
		JOIN LATERAL (SELECT final_url, body_key, content_type, robots_tag, content_hash, bytes, changed FROM fetches
			WHERE crawl_id = u.crawl_id AND url_hash = u.url_hash AND `+lastBodySQL("u")+`
			ORDER BY id DESC LIMIT 1) f ON true`, crawlID, owner, limit, hold.Seconds(), back.Owners, back.Ago.Seconds(), from)
	br := s.pool.SendBatch(ctx, b)
	defer br.Close()
	if err := br.QueryRow().Scan(&pc.CrawlState); err != nil && err != pgx.ErrNoRows {
		return ProcessingClaim{}, fmt.Errorf("store: state of crawl %s: %w", crawlID, err)
	}
	rows, err := br.Query()
	if err == nil {
		pc.Pages, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (FetchedPage, error) {
			var p FetchedPage
			var waiting time.Time
			err := r.Scan(&p.CrawlID, &p.Hash, &p.URL, &p.Host, &p.Depth, &p.FinalURL, &p.BodyKey, &p.ContentType, &p.RobotsTag,
				&p.ContentHash, &p.Size, &p.Changed, &p.RecrawlS, &p.HintS, &waiting)
			if waiting.After(pc.Newest) {
				pc.Newest = waiting
			}
			return p, err
		})
	}
	if err != nil {
		return ProcessingClaim{}, fmt.Errorf("store: claim fetched pages of crawl %s: %w", crawlID, err)
	}
	return pc, nil
}
