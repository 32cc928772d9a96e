package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/trawlerdev/trawler/internal/crawl"
)

// Claim claims up to limit due URLs of host, best first, from running crawls: queued ones due
// by now, and claimed ones whose TTL has run out (their claimer died). When none is due it
// returns when the next one will be (nil: none pending).
func (agg Frontier) Claim(ctx context.Context, host string, limit int, ttl time.Duration, now time.Time) ([]crawl.Claimed, *time.Time, error) {
	s := agg.s
	return s.Frontier().ClaimAs(ctx, host, "", limit, ttl, now)
}

// ClaimAs is Claim on behalf of owner, the host's fetch lease. The host's workflow runs one
// lease at a time (it waits for a cancelled one to end), so a claim on the host's URLs held by
// any other owner is a dead lease's — a killed attempt's chunk, a run that ended — and is taken
// at once, whatever its TTL says: the TTL only bounds claims no lease of the host ever comes
// back for (StaleHosts wakes those hosts). The owner's own claims (and its chunks', as
// crawl.ChunkOwner) come first, so a retry takes back what its dead attempt held. An empty
// claim leaves the host waiting: the next admission of its URLs returns it in
// AdmitResult.Wake.
func (agg Frontier) ClaimAs(ctx context.Context, host, owner string, limit int, ttl time.Duration, now time.Time) ([]crawl.Claimed, *time.Time, error) {
	s := agg.s
	r, err := s.claim(ctx, host, owner, limit, ttl, now, claimMode{waitIfEmpty: true})
	return r.URLs, r.Next, err
}

// ClaimQuietly is ClaimAs for a claimer that will claim again by itself (a batch topping itself
// up, a host whose own pages are being processed): found or not, the host is not left waiting,
// so admissions meanwhile wake nobody.
func (agg Frontier) ClaimQuietly(ctx context.Context, host, owner string, limit int, ttl time.Duration, now time.Time) ([]crawl.Claimed, *time.Time, error) {
	s := agg.s
	r, err := s.claim(ctx, host, owner, limit, ttl, now, claimMode{})
	return r.URLs, r.Next, err
}

// LeaseClaim is what a fetch lease's claim between chunks found: the URLs it claimed, or, when
// none, when the next is due (nil: none pending), how many pages fetched under the lease's
// owners still await processing (their links may be for the host), and whether the claim left
// the host waiting (the lease is over: see ClaimInLease).
type LeaseClaim struct {
	URLs     []crawl.Claimed
	Next     *time.Time
	Awaiting int
	Waiting  bool
}

// ClaimInLease is a fetch lease's claim between chunks, in one round trip: ClaimQuietly, and
// when it finds nothing, what HostDue would say. A claim that finds nothing, no URL due within
// soon and no page of owners awaiting processing leaves the host waiting, as ClaimAs does: the
// lease has nothing left to wait for and ends, and the next admission of the host's URLs wakes
// its workflow.
func (agg Frontier) ClaimInLease(ctx context.Context, host, owner string, owners []string, limit int, ttl time.Duration, now time.Time, soon time.Duration) (LeaseClaim, error) {
	s := agg.s
	return s.claim(ctx, host, owner, limit, ttl, now, claimMode{waitIfEmpty: true, owners: owners, soon: soon})
}

// claimNextSQL selects when host $1's next URL is due: its first queued one, or the first
// claim of it to run out.
const claimNextSQL = `SELECT (SELECT min(t) FROM (
		SELECT min(u.next_fetch_at) AS t FROM urls u JOIN crawls c ON c.id = u.crawl_id AND c.state = 'running'
		WHERE u.host = $1 AND u.state = 'queued'
		UNION ALL
		SELECT min(claimed_until) FROM urls WHERE host = $1 AND state = 'claimed') x)`

// claimedNowSQL says whether the claim before it in its batch (one implicit transaction)
// claimed any of host $1's URLs: when it did, what follows it is not read, so it is not
// computed (an uncorrelated subquery in a CASE branch not taken never runs). It reads one
// entry of the host's claimed URLs' index, the last: a claim's URLs are claimed until its
// clock plus its hold, after every earlier claim of the host (an EXISTS read the host's claims
// in index order, and its dead entries, up to this one's at the end: 15 to 133 buffers a page,
// as vacuum had left them, issue 49). Were another claim's URL last (a longer hold), the answer
// would be no, and the next due time computed for nothing: never a claim missed.
const claimedNowSQL = `coalesce((SELECT xmin = xid(pg_current_xact_id()) FROM urls WHERE host = $1 AND state = 'claimed'
	ORDER BY claimed_until DESC LIMIT 1), false)`

// claimMode says when an empty claim leaves the host waiting: never, always (waitIfEmpty), or,
// for a lease (owners set), only when nothing is due within soon and no page of owners awaits
// processing.
type claimMode struct {
	waitIfEmpty bool
	owners      []string
	soon        time.Duration
}

func (s *Store) claim(ctx context.Context, host, owner string, limit int, ttl time.Duration, now time.Time, mode claimMode) (LeaseClaim, error) {
	// One round trip: the batch is one implicit transaction whose statements run in order,
	// each on a fresh snapshot. The host's row is locked first: an admission adding URLs
	// meanwhile either committed before (the claim sees its URLs) or waits for this claim and
	// then sees whether it left the host waiting for a signal (Admit). Claims expire on the
	// database's clock, which every claimer shares.
	if err := s.toDB(ctx, &now); err != nil {
		return LeaseClaim{}, err
	}
	b := &pgx.Batch{}
	b.Queue(`INSERT INTO hosts (host, last_claim_at) VALUES ($1, $2)
		ON CONFLICT (host) DO UPDATE SET last_claim_at = excluded.last_claim_at`, host, now)
	// A fetch lease's own claims come first: a retry claims as the lease's owner, and its dead
	// predecessor's chunks after the first were claimed as crawl.ChunkOwner of it.
	mine := []string{owner, crawl.ChunkOwner(owner)}
	args := []any{host, now, limit, ttl, owner, mode.waitIfEmpty, mine}
	waiting, after, afterArgs := `$6 AND NOT EXISTS (SELECT 1 FROM claimed)`, `SELECT CASE WHEN `+claimedNowSQL+` THEN NULL ELSE (`+claimNextSQL+`) END`, []any{host}
	if mode.owners != nil {
		waiting += ` AND NOT EXISTS (SELECT 1 FROM urls WHERE host = $1 AND state = 'fetched' AND claimed_by = ANY($8))
			AND NOT EXISTS (SELECT 1 FROM urls u JOIN crawls c ON c.id = u.crawl_id AND c.state = 'running'
				WHERE u.host = $1 AND ((u.state = 'queued' AND u.next_fetch_at <= $2::timestamptz + $9::interval)
					OR (u.state = 'claimed' AND u.claimed_until <= $2::timestamptz + $9::interval)))`
		args = append(args, mode.owners, mode.soon)
		after, afterArgs = after+`, CASE WHEN `+claimedNowSQL+` THEN 0 ELSE
				(SELECT count(*) FROM urls WHERE host = $1 AND state = 'fetched' AND claimed_by = ANY($2)) END,
			(SELECT waiting FROM hosts WHERE host = $1)`, []any{host, mode.owners}
	}
	b.Queue(`WITH c AS (
			SELECT u.crawl_id, u.url_hash FROM urls u JOIN crawls c ON c.id = u.crawl_id AND c.state = 'running'
			WHERE u.host = $1 AND ((u.state = 'queued' AND u.next_fetch_at <= $2)
				OR (u.state = 'claimed' AND (u.claimed_until < $2 OR $5 <> '')))
			ORDER BY (u.state = 'claimed' AND u.claimed_by = ANY($7)) DESC NULLS LAST, u.priority DESC, u.depth, u.next_fetch_at
			LIMIT $3 FOR UPDATE OF u SKIP LOCKED),
		claimed AS (
			UPDATE urls u SET state = 'claimed', claimed_until = $2::timestamptz + $4::interval, claimed_by = nullif($5, ''), updated_at = now()
			FROM c WHERE u.crawl_id = c.crawl_id AND u.url_hash = c.url_hash
			RETURNING u.crawl_id, u.url_hash, u.url, u.depth, u.hops, u.attempts, u.fetch_count,
				-- (validators stored before they were capped are not sent back: crawl.Validator)
				CASE WHEN octet_length(u.etag) <= 1024 THEN u.etag ELSE '' END,
				CASE WHEN octet_length(u.last_modified) <= 1024 THEN u.last_modified ELSE '' END, u.source,
				u.content_hash, coalesce(u.recrawl_s, 0), coalesce(u.change_hint_s, 0), u.gone_count, coalesce(u.body_key, '')),
		waiting AS (UPDATE hosts SET waiting = `+waiting+` WHERE host = $1)
		SELECT * FROM claimed`, args...)
	b.Queue(after, afterArgs...)
	var claimed []crawl.Claimed
	var next *time.Time
	var res LeaseClaim
	err := func() error {
		br := s.pool.SendBatch(ctx, b)
		defer br.Close()
		if _, err := br.Exec(); err != nil {
			return err
		}
		rows, err := br.Query()
		if err != nil {
			return err
		}
		claimed, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (crawl.Claimed, error) {
			var c crawl.Claimed
			err := r.Scan(&c.CrawlID, &c.Hash, &c.URL, &c.Depth, &c.Hops, &c.Attempts, &c.FetchCount, &c.ETag, &c.LastModified, &c.Source,
				&c.ContentHash, &c.RecrawlS, &c.HintS, &c.GoneCount, &c.BodyKey)
			return c, err
		})
		if err != nil {
			return err
		}
		dest := []any{&next}
		if mode.owners != nil {
			dest = append(dest, &res.Awaiting, &res.Waiting)
		}
		if err := br.QueryRow().Scan(dest...); err != nil {
			return err
		}
		return br.Close()
	}()
	if err != nil {
		return LeaseClaim{}, fmt.Errorf("store: claim %s: %w", host, err)
	}
	if len(claimed) > 0 {
		return LeaseClaim{URLs: claimed}, nil
	}
	res.Next = s.clock.fromDBPtr(next)
	return res, nil
}

// Release returns claimed URLs to the queue (their fetch will not happen now).
func (agg Frontier) Release(ctx context.Context, claims []crawl.Claimed) error {
	s := agg.s
	for _, c := range claims {
		if _, err := s.pool.Exec(ctx, `UPDATE urls SET state = 'queued', claimed_until = NULL, updated_at = now()
			WHERE crawl_id = $1 AND url_hash = $2 AND state = 'claimed'`, c.CrawlID, c.Hash); err != nil {
			return fmt.Errorf("store: release %s: %w", c.URL, err)
		}
	}
	return nil
}

// SeenRows streams every (crawl, URL hash) of the frontier, for rebuilding a Bloom filter.
// The caller closes the rows.
func (agg Frontier) SeenRows(ctx context.Context) (pgx.Rows, error) {
	s := agg.s
	rows, err := s.pool.Query(ctx, `SELECT crawl_id, url_hash FROM urls`)
	if err != nil {
		return nil, fmt.Errorf("store: stream the seen-set: %w", err)
	}
	return rows, nil
}

// URLState reads a URL's state and its crawl's: a batch checks the URL is still "claimed"
// before each request (a stop or a block since the claim takes the URL back) and its crawl not
// paused, and finds "fetched" when an earlier attempt of the batch already fetched it.
func (agg Frontier) URLState(ctx context.Context, crawlID string, hash []byte) (state crawl.URLState, crawlState crawl.CrawlState, err error) {
	s := agg.s
	err = s.pool.QueryRow(ctx, `SELECT u.state, c.state FROM urls u JOIN crawls c ON c.id = u.crawl_id
		WHERE u.crawl_id = $1 AND u.url_hash = $2`, crawlID, hash).Scan(&state, &crawlState)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", "", nil
	}
	if err != nil {
		return "", "", fmt.Errorf("store: check claim: %w", err)
	}
	return state, crawlState, nil
}

// ReleaseOwned returns to the queue the URLs of host still claimed by any of owners: what a
// batch that stopped or failed for good holds, top-ups it claimed itself included.
func (agg Frontier) ReleaseOwned(ctx context.Context, host string, owners []string) error {
	s := agg.s
	if _, err := s.pool.Exec(ctx, `UPDATE urls SET state = 'queued', claimed_until = NULL, updated_at = now()
		WHERE host = $1 AND state = 'claimed' AND claimed_by = ANY($2)`, host, owners); err != nil {
		return fmt.Errorf("store: release %s's claims of %v: %w", host, owners, err)
	}
	return nil
}

// QueuedHosts returns the hosts of the given URLs of a crawl that are queued (sorted).
func (agg Frontier) QueuedHosts(ctx context.Context, crawlID string, hashes [][]byte) ([]string, error) {
	s := agg.s
	rows, err := s.pool.Query(ctx, `SELECT DISTINCT host FROM urls WHERE crawl_id = $1 AND url_hash = ANY($2) AND state = 'queued' ORDER BY host`,
		crawlID, hashes)
	if err != nil {
		return nil, fmt.Errorf("store: hosts of queued URLs: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}
