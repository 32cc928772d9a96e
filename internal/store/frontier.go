package store

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/trawlerdev/trawler/internal/crawl"
)

// Candidate is a normalized URL offered to a crawl's frontier.
type Candidate struct {
	URL      string // the request form: what is fetched (urlnorm)
	Key      string // the key form Hash is of, for the crawl's rules (not stored)
	Hash     []byte
	Host     string
	Depth    int
	Hops     int
	Source   crawl.Source
	Priority float32
	HintS    int // sitemap <changefreq> as seconds (0: none)
	// LastMod is when a sitemap says the page last changed (zero: it does not say). A queued
	// URL fetched before it is due again now: its recrawl comes forward.
	LastMod time.Time
}

// InLinkBoost is what each further in-link adds to a queued URL's priority.
const InLinkBoost = 0.05

// AdmitResult says what admission did with a batch.
type AdmitResult struct {
	New        map[string]int // host -> URLs newly queued
	Wake       []string       // hosts of New whose workflows wait for a signal (sorted)
	Duplicates int            // already in the frontier
	OverBudget int            // new, but past the crawl's or host's page budget: recorded as skipped
	Forward    int            // known URLs whose recrawl a newer sitemap <lastmod> brought forward
}

// Admit adds candidates to a crawl's frontier in one statement. URLs already present are
// left alone; new ones beyond the crawl's max_pages or a host's max_pages_per_host are
// recorded as skipped ("budget"), earlier candidates taking the room first. The crawl row is
// locked for the transaction, so concurrent admitters cannot overrun a budget.
func (s *Store) Admit(ctx context.Context, crawlID string, cands []Candidate) (AdmitResult, error) {
	return s.AdmitWaking(ctx, crawlID, cands, -1)
}

// AdmitWaking is Admit that wakes at most maxWake of the hosts waiting for work (negative: all
// of them): the others stay waiting, their URLs queued, for the crawl's sweep or a later
// admission. A worker that admits links faster than host workflows can start keeps the
// workflow task queue from flooding (and the crawl's own signals from waiting behind it).
func (s *Store) AdmitWaking(ctx context.Context, crawlID string, cands []Candidate, maxWake int) (AdmitResult, error) {
	res := AdmitResult{New: map[string]int{}}
	if len(cands) == 0 {
		return res, nil
	}
	// Two round trips in all: BEGIN and COMMIT ride on the two batches.
	err := s.inPipelinedTx(ctx, func(tx *pipelinedTx) error {
		res = AdmitResult{New: map[string]int{}}
		var maxPages, admitted int64
		var maxPerHost int
		var state crawl.CrawlState
		n := len(cands)
		hashes, urls, hosts, sources := make([][]byte, n), make([]string, n), make([]string, n), make([]string, n)
		depths, hops := make([]int32, n), make([]int32, n)
		prios := make([]float32, n)
		hints := make([]int32, n)
		for i, c := range cands {
			hashes[i], urls[i], hosts[i], sources[i] = c.Hash, c.URL, c.Host, string(c.Source)
			depths[i], hops[i], prios[i], hints[i] = int32(c.Depth), int32(c.Hops), c.Priority, int32(c.HintS)
		}
		// Two round trips in the transaction, each a pipelined batch: lock the crawl (its
		// budget), insert the URLs and read the hosts' budgets; then everything that follows
		// from which URLs were new.
		var inserted [][]byte
		hostAdmitted := map[string]int{}
		b := &pgx.Batch{}
		// FOR NO KEY UPDATE, not FOR UPDATE: admissions serialize on the crawl's budget, but
		// every insert that references the crawl (a fetch, a document, a URL) takes a KEY
		// SHARE lock on its row, which FOR UPDATE would make wait for the whole admission.
		b.Queue(`SELECT max_pages, max_pages_per_host, admitted, state FROM crawls WHERE id = $1 FOR NO KEY UPDATE`, crawlID)
		b.Queue(`INSERT INTO urls (crawl_id, url_hash, url, host, depth, hops, source, priority, change_hint_s)
			SELECT $1, h, u, ho, d, hp, s, p, nullif(ch, 0)
			FROM unnest($2::bytea[], $3::text[], $4::text[], $5::int[], $6::int[], $7::text[], $8::real[], $9::int[]) AS t(h, u, ho, d, hp, s, p, ch)
			ON CONFLICT (crawl_id, url_hash) DO NOTHING RETURNING url_hash`,
			crawlID, hashes, urls, hosts, depths, hops, sources, prios, hints)
		b.Queue(`SELECT host, admitted FROM crawl_hosts WHERE crawl_id = $1 AND host = ANY($2)`, crawlID, hosts)
		// A sitemap's newer <lastmod> brings a queued recrawl forward (a URL inserted just now
		// has no fetch, so it is not among them).
		var fwdHashes [][]byte
		var fwdTimes []time.Time
		for _, c := range cands {
			if !c.LastMod.IsZero() {
				fwdHashes, fwdTimes = append(fwdHashes, c.Hash), append(fwdTimes, c.LastMod)
			}
		}
		forwardAt := -1
		if len(fwdHashes) > 0 {
			forwardAt = b.Len()
			b.Queue(`UPDATE urls u SET next_fetch_at = now(), updated_at = now()
				FROM unnest($2::bytea[], $3::timestamptz[]) AS t(h, lm)
				WHERE u.crawl_id = $1 AND u.url_hash = t.h AND u.state = 'queued' AND u.last_fetched_at < t.lm
					AND u.next_fetch_at > now()
				RETURNING u.host`, crawlID, fwdHashes, fwdTimes)
		}
		var forwardHosts []string
		err := tx.send(ctx, b, false, func(br pgx.BatchResults) error {
			if err := br.QueryRow().Scan(&maxPages, &maxPerHost, &admitted, &state); err != nil {
				return fmt.Errorf("lock crawl %s: %w", crawlID, err)
			}
			rows, err := br.Query()
			if err != nil {
				return fmt.Errorf("insert urls: %w", err)
			}
			if inserted, err = pgx.CollectRows(rows, pgx.RowTo[[]byte]); err != nil {
				return fmt.Errorf("insert urls: %w", err)
			}
			rows, err = br.Query()
			if err != nil {
				return fmt.Errorf("read host budgets: %w", err)
			}
			for rows.Next() {
				var h string
				var a int
				if err := rows.Scan(&h, &a); err != nil {
					rows.Close()
					return err
				}
				hostAdmitted[h] = a
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			if forwardAt >= 0 {
				rows, err := br.Query()
				if err != nil {
					return fmt.Errorf("bring recrawls forward: %w", err)
				}
				if forwardHosts, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
					return fmt.Errorf("bring recrawls forward: %w", err)
				}
				res.Forward = len(forwardHosts)
			}
			return nil
		})
		if err != nil {
			return err
		}
		isNew := make(map[string]bool, len(inserted))
		for _, h := range inserted {
			isNew[string(h)] = true
		}
		var over [][]byte
		seen := map[string]bool{}
		for _, c := range cands {
			key := string(c.Hash)
			if !isNew[key] || seen[key] {
				res.Duplicates++
				continue
			}
			seen[key] = true
			if (maxPages > 0 && admitted >= maxPages) || (maxPerHost > 0 && hostAdmitted[c.Host] >= maxPerHost) {
				over = append(over, c.Hash)
				res.OverBudget++
				continue
			}
			admitted++
			hostAdmitted[c.Host]++
			res.New[c.Host]++
		}
		b = &pgx.Batch{}
		if len(over) > 0 {
			b.Queue(`UPDATE urls u SET state = 'skipped', skip_reason = 'budget' FROM unnest($2::bytea[]) AS t(h)
				WHERE u.crawl_id = $1 AND u.url_hash = t.h`, crawlID, over)
		}
		// Each further link to a queued URL is an in-link: it moves up its host's queue.
		var again [][]byte
		for _, c := range cands {
			if !isNew[string(c.Hash)] && c.Source == crawl.SourceLink {
				again = append(again, c.Hash)
			}
		}
		if len(again) > 0 {
			b.Queue(`UPDATE urls u SET priority = u.priority + $3 FROM unnest($2::bytea[]) AS t(h)
				WHERE u.crawl_id = $1 AND u.url_hash = t.h AND u.state = 'queued'`, crawlID, again, InLinkBoost)
		}
		wakeAt := -1             // the position of the waiting hosts' query in the batch
		due := map[string]bool{} // hosts with URLs due now: new ones, or recrawls brought forward
		for h := range res.New {
			due[h] = true
		}
		for _, h := range forwardHosts {
			due[h] = true
		}
		if len(res.New) > 0 {
			// A retired host takes no new URLs: they are recorded, skipped with the reason.
			newHosts, counts := make([]string, 0, len(res.New)), make([]int32, 0, len(res.New))
			total := 0
			for h, c := range res.New {
				newHosts, counts = append(newHosts, h), append(counts, int32(c))
				total += c
			}
			// Driven from the hosts: a few key probes that nearly always find none retired, and
			// then (the one-time EXISTS filter) no URL is looked at.
			b.Queue(`WITH r AS MATERIALIZED (SELECT host, retired_reason FROM hosts WHERE host = ANY($3) AND retired_at IS NOT NULL)
				UPDATE urls u SET state = 'skipped', skip_reason = 'host retired: ' || r.retired_reason
				FROM r WHERE EXISTS (SELECT 1 FROM r) AND u.crawl_id = $1 AND u.url_hash = ANY($2) AND u.host = r.host`,
				crawlID, inserted, newHosts)
			b.Queue(`INSERT INTO crawl_hosts (crawl_id, host, admitted)
				SELECT $1, h, c FROM unnest($2::text[], $3::int[]) AS t(h, c)
				ON CONFLICT (crawl_id, host) DO UPDATE SET admitted = crawl_hosts.admitted + excluded.admitted`, crawlID, newHosts, counts)
			b.Queue(`UPDATE crawls SET admitted = admitted + $2, updated_at = now() WHERE id = $1`, crawlID, total)
		}
		if len(due) > 0 {
			dueHosts := make([]string, 0, len(due))
			for h := range due {
				dueHosts = append(dueHosts, h)
			}
			// Only hosts whose workflow found nothing at its last claim wait for a signal; the
			// others claim again after their lease. Sorted: concurrent admissions lock host rows
			// in order.
			// A crawl that is not running wakes nobody (its URLs cannot be claimed): its hosts
			// stay waiting, and a resume wakes every host with due URLs.
			if state == crawl.CrawlRunning && maxWake != 0 {
				sorted := dueHosts
				sort.Strings(sorted)
				var limit *int // LIMIT NULL: no limit
				if maxWake > 0 {
					limit = &maxWake
				}
				// New hosts' rows first (waiting, as a host with no workflow is), then the first
				// maxWake waiting ones are taken, locked in name order.
				b.Queue(`INSERT INTO hosts (host) SELECT h FROM unnest($1::text[]) AS t(h) ORDER BY h
					ON CONFLICT (host) DO NOTHING`, sorted)
				wakeAt = b.Len()
				b.Queue(`UPDATE hosts h SET waiting = false FROM (
						SELECT host FROM hosts WHERE host = ANY($1) AND waiting ORDER BY host LIMIT $2 FOR UPDATE) w
					WHERE h.host = w.host RETURNING h.host`, sorted, limit)
			}
			if state == crawl.CrawlRunning {
				// Fetch leases of these hosts waiting for links hear of them at commit.
				b.Queue(notifyDueSQL(`SELECT unnest($1::text[])`), dueHosts)
			}
		}
		if b.Len() == 0 {
			return nil
		}
		return tx.send(ctx, b, true, func(br pgx.BatchResults) error {
			for i := 0; i < b.Len(); i++ {
				if i != wakeAt {
					if _, err := br.Exec(); err != nil {
						return fmt.Errorf("admit (step %d): %w", i, err)
					}
					continue
				}
				rows, err := br.Query()
				if err != nil {
					return fmt.Errorf("find waiting hosts: %w", err)
				}
				if res.Wake, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
					return fmt.Errorf("find waiting hosts: %w", err)
				}
				sort.Strings(res.Wake)
			}
			return nil
		})
	})
	if err != nil {
		return res, fmt.Errorf("store: admit to %s: %w", crawlID, err)
	}
	return res, nil
}

// Claim leases up to limit due URLs of host, best first, from running crawls: queued ones due
// by now, and claimed ones whose lease has run out (their claimer died). When none is due it
// returns when the next one will be (nil: none pending).
func (s *Store) Claim(ctx context.Context, host string, limit int, lease time.Duration, now time.Time) ([]crawl.Claimed, *time.Time, error) {
	return s.ClaimAs(ctx, host, "", limit, lease, now)
}

// ClaimAs is Claim on behalf of owner: URLs the same owner claimed before and still holds come
// first, so a claimer that died after claiming (its result lost) and runs again under the same
// owner takes its claims back instead of waiting out their lease. An empty claim leaves the
// host waiting: the next admission of its URLs returns it in AdmitResult.Wake.
func (s *Store) ClaimAs(ctx context.Context, host, owner string, limit int, lease time.Duration, now time.Time) ([]crawl.Claimed, *time.Time, error) {
	r, err := s.claim(ctx, host, owner, limit, lease, now, claimMode{waitIfEmpty: true})
	return r.URLs, r.Next, err
}

// ClaimQuietly is ClaimAs for a claimer that will claim again by itself (a batch topping itself
// up, a host whose own pages are being processed): found or not, the host is not left waiting,
// so admissions meanwhile wake nobody.
func (s *Store) ClaimQuietly(ctx context.Context, host, owner string, limit int, lease time.Duration, now time.Time) ([]crawl.Claimed, *time.Time, error) {
	r, err := s.claim(ctx, host, owner, limit, lease, now, claimMode{})
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
func (s *Store) ClaimInLease(ctx context.Context, host, owner string, owners []string, limit int, lease time.Duration, now time.Time, soon time.Duration) (LeaseClaim, error) {
	return s.claim(ctx, host, owner, limit, lease, now, claimMode{waitIfEmpty: true, owners: owners, soon: soon})
}

// claimNextSQL selects when host $1's next URL is due: its first queued one, or the first
// claim of it to run out.
const claimNextSQL = `SELECT (SELECT min(t) FROM (
		SELECT min(u.next_fetch_at) AS t FROM urls u JOIN crawls c ON c.id = u.crawl_id AND c.state = 'running'
		WHERE u.host = $1 AND u.state = 'queued'
		UNION ALL
		SELECT min(claimed_until) FROM urls WHERE host = $1 AND state = 'claimed') x)`

// claimMode says when an empty claim leaves the host waiting: never, always (waitIfEmpty), or,
// for a lease (owners set), only when nothing is due within soon and no page of owners awaits
// processing.
type claimMode struct {
	waitIfEmpty bool
	owners      []string
	soon        time.Duration
}

func (s *Store) claim(ctx context.Context, host, owner string, limit int, lease time.Duration, now time.Time, mode claimMode) (LeaseClaim, error) {
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
	args := []any{host, now, limit, lease, owner, mode.waitIfEmpty}
	waiting, after, afterArgs := `$6 AND NOT EXISTS (SELECT 1 FROM claimed)`, claimNextSQL, []any{host}
	if mode.owners != nil {
		waiting += ` AND NOT EXISTS (SELECT 1 FROM urls WHERE host = $1 AND state = 'fetched' AND claimed_by = ANY($7))
			AND NOT EXISTS (SELECT 1 FROM urls u JOIN crawls c ON c.id = u.crawl_id AND c.state = 'running'
				WHERE u.host = $1 AND ((u.state = 'queued' AND u.next_fetch_at <= $2::timestamptz + $8::interval)
					OR (u.state = 'claimed' AND u.claimed_until <= $2::timestamptz + $8::interval)))`
		args = append(args, mode.owners, mode.soon)
		after, afterArgs = claimNextSQL+`, (SELECT count(*) FROM urls WHERE host = $1 AND state = 'fetched' AND claimed_by = ANY($2)),
			(SELECT waiting FROM hosts WHERE host = $1)`, []any{host, mode.owners}
	}
	b.Queue(`WITH c AS (
			SELECT u.crawl_id, u.url_hash FROM urls u JOIN crawls c ON c.id = u.crawl_id AND c.state = 'running'
			WHERE u.host = $1 AND ((u.state = 'queued' AND u.next_fetch_at <= $2)
				OR (u.state = 'claimed' AND (u.claimed_until < $2 OR u.claimed_by = $5)))
			ORDER BY (u.state = 'claimed' AND u.claimed_by = $5) DESC NULLS LAST, u.priority DESC, u.depth, u.next_fetch_at
			LIMIT $3 FOR UPDATE OF u SKIP LOCKED),
		claimed AS (
			UPDATE urls u SET state = 'claimed', claimed_until = $2::timestamptz + $4::interval, claimed_by = nullif($5, ''), updated_at = now()
			FROM c WHERE u.crawl_id = c.crawl_id AND u.url_hash = c.url_hash
			RETURNING u.crawl_id, u.url_hash, u.url, u.depth, u.hops, u.attempts, u.fetch_count, coalesce(u.etag, ''), coalesce(u.last_modified, ''), u.source,
				u.content_hash, coalesce(u.recrawl_s, 0), coalesce(u.change_hint_s, 0), u.gone_count),
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
				&c.ContentHash, &c.RecrawlS, &c.HintS, &c.GoneCount)
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
func (s *Store) Release(ctx context.Context, claims []crawl.Claimed) error {
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
func (s *Store) SeenRows(ctx context.Context) (pgx.Rows, error) {
	rows, err := s.pool.Query(ctx, `SELECT crawl_id, url_hash FROM urls`)
	if err != nil {
		return nil, fmt.Errorf("store: stream the seen-set: %w", err)
	}
	return rows, nil
}

// URLState reads a URL's state and its crawl's: a batch checks the URL is still "claimed"
// before each request (a stop or a block since the claim takes the URL back) and its crawl not
// paused, and finds "fetched" when an earlier attempt of the batch already fetched it.
func (s *Store) URLState(ctx context.Context, crawlID string, hash []byte) (state string, crawlState crawl.CrawlState, err error) {
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
func (s *Store) ReleaseOwned(ctx context.Context, host string, owners []string) error {
	if _, err := s.pool.Exec(ctx, `UPDATE urls SET state = 'queued', claimed_until = NULL, updated_at = now()
		WHERE host = $1 AND state = 'claimed' AND claimed_by = ANY($2)`, host, owners); err != nil {
		return fmt.Errorf("store: release %s's claims of %v: %w", host, owners, err)
	}
	return nil
}

// FetchedOwned returns the pages of host fetched under claims of any of owners that still
// await processing: a fetch attempt that died after recording a page, before reporting it,
// leaves them to its retry (or its host workflow) this way.
func (s *Store) FetchedOwned(ctx context.Context, host string, owners []string) ([]FetchedPage, error) {
	rows, err := s.pool.Query(ctx, fetchedOwnedSQL, host, owners)
	if err != nil {
		return nil, fmt.Errorf("store: fetched pages of %s's claims: %w", host, err)
	}
	return pgx.CollectRows(rows, scanOwnedPage)
}

// fetchedOwnedSQL selects the pages of host ($1) fetched under claims of owners ($2) that await
// processing, with what their fetch found for the recrawl schedule.
const fetchedOwnedSQL = `SELECT u.crawl_id, u.url_hash, u.url, u.host, u.depth, coalesce(f.final_url, ''), f.body_key,
		coalesce(f.content_type, ''), coalesce(f.robots_tag, ''), f.content_hash, coalesce(f.bytes, 0), f.changed, coalesce(u.recrawl_s, 0), coalesce(u.change_hint_s, 0)
	FROM urls u
	JOIN LATERAL (SELECT final_url, body_key, content_type, robots_tag, content_hash, bytes, changed FROM fetches
		WHERE crawl_id = u.crawl_id AND url_hash = u.url_hash AND body_key IS NOT NULL
		ORDER BY fetched_at DESC LIMIT 1) f ON true
	WHERE u.host = $1 AND u.state = 'fetched' AND u.claimed_by = ANY($2)
	ORDER BY u.updated_at`

func scanOwnedPage(r pgx.CollectableRow) (FetchedPage, error) {
	var p FetchedPage
	err := r.Scan(&p.CrawlID, &p.Hash, &p.URL, &p.Host, &p.Depth, &p.FinalURL, &p.BodyKey, &p.ContentType, &p.RobotsTag, &p.ContentHash, &p.Size,
		&p.Changed, &p.RecrawlS, &p.HintS)
	return p, err
}

// QueuedHosts returns the hosts of the given URLs of a crawl that are queued (sorted).
func (s *Store) QueuedHosts(ctx context.Context, crawlID string, hashes [][]byte) ([]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT DISTINCT host FROM urls WHERE crawl_id = $1 AND url_hash = ANY($2) AND state = 'queued' ORDER BY host`,
		crawlID, hashes)
	if err != nil {
		return nil, fmt.Errorf("store: hosts of queued URLs: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}
