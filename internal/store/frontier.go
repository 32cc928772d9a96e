package store

import (
	"context"
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

// InLinkBoost is what each further in-link adds to a queued URL's priority, for at most
// MaxInLinkBoosts links over the URL's life: each boost locks the URL's row and writes a new
// version of it (WAL, and index entries when its page is full), and the links a host's pages
// all share would otherwise rewrite the same rows at every page (schema 0041).
const (
	InLinkBoost     = 0.05
	MaxInLinkBoosts = 10
)

// AdmitResult says what admission did with a batch.
type AdmitResult struct {
	New        map[string]int // host -> URLs newly queued
	Wake       []string       // hosts of New whose workflows wait for a signal (sorted)
	Duplicates int            // already in the frontier
	OverBudget int            // new, but past the crawl's or host's page budget: recorded as skipped
	Forward    int            // known URLs whose recrawl a newer sitemap <lastmod> brought forward
}

// Budgets is what a crawl's admission reads (under the crawl row's lock, exclusive of other
// admissions when the crawl has a budget: lockBudgetsSQL): the crawl's budgets (0: none) and
// what they hold, and, for the candidates' hosts the crawl already has, how many URLs each was
// admitted.
type Budgets struct {
	MaxPages, Admitted int64
	MaxPerHost         int
	MaxHosts, Hosts    int
	HostAdmitted       map[string]int
	Requisites         int64 // requisites admitted free of the page budgets so far
}

// BudgetRule decides which of the URLs new to a crawl enter its frontier, in the order given.
// The rule is admission's (admit.Budget); the store reads the budgets under the crawl row's
// lock, so concurrent admitters cannot overrun them, and records the verdicts and the new
// counts.
type BudgetRule func(b Budgets, fresh []Candidate) []BudgetVerdict

// BudgetVerdict is what becomes of one new URL: Skip says why it is recorded skipped
// (crawl.SkipBudget, crawl.SkipMaxHosts; "": admitted); Free admits it outside the page
// budgets (a page's requisite), not counted in the crawl's or its host's admitted URLs.
type BudgetVerdict struct {
	Skip string
	Free bool
}

// lockBudgetsSQL reads a crawl's budgets, what they hold and its state for an admission,
// under a lock on the crawl's row. With a budget (pages, pages per host, hosts) the lock is
// FOR NO KEY UPDATE: admissions of a budgeted crawl serialize, so none overruns what another
// read. Without, it is KEY SHARE, which admissions share: they run side by side (each waited
// here for the one before: 13 ms a call in make bench's pg_stat_statements, issue 49), and
// their counters are added to, never read back and written. Not FOR UPDATE: an insert into a
// table whose foreign key names the crawl takes a KEY SHARE lock on its row, which FOR UPDATE
// would make wait for the whole admission. Either lock holds the crawl's row against a
// deletion (which locks it FOR UPDATE before it deletes a row of the crawl) until the
// admission commits: what urls' foreign key to crawls did once for each URL inserted (2.6
// checks a fetched page in make bench), which schema 0048 drops. A crawl deleted first is
// gone when this reads it, and the admission fails before it inserts anything.
const lockBudgetsSQL = `WITH locked AS (
		SELECT max_pages, max_pages_per_host, max_hosts, hosts, admitted, requisites, state FROM crawls
		WHERE id = $1 AND ($2 OR max_pages > 0 OR max_pages_per_host > 0 OR max_hosts > 0) FOR NO KEY UPDATE),
	shared AS (
		SELECT max_pages, max_pages_per_host, max_hosts, hosts, admitted, requisites, state FROM crawls
		WHERE id = $1 AND NOT ($2 OR max_pages > 0 OR max_pages_per_host > 0 OR max_hosts > 0) FOR KEY SHARE)
	SELECT * FROM locked
	UNION ALL
	SELECT * FROM shared`

// hasLastMod says whether any candidate carries a sitemap's lastmod.
func hasLastMod(cands []Candidate) bool {
	for _, c := range cands {
		if !c.LastMod.IsZero() {
			return true
		}
	}
	return false
}

// Admit adds candidates to a crawl's frontier in one transaction of two round trips. URLs
// already present are left alone (a link to a queued one raises its priority); new ones go
// through rule. It wakes at most maxWake of the hosts waiting for work (negative: all of
// them): the others stay waiting, their URLs queued, for the crawl's sweep or a later
// admission. A worker that admits links faster than host workflows can start keeps the
// workflow task queue from flooding (and the crawl's own signals from waiting behind it).
//
// Admissions of a crawl without budgets run side by side (lockBudgetsSQL), so each locks rows
// in one order: the crawl's row KEY SHARE (which only a deletion waits for), its new URLs by
// hash, then the crawl's hosts by name and the crawl's row for its counters, then URLs it did
// not insert, then hosts by name. The crawl's row comes before any URL another transaction
// can see, as when every admission began with it: a stop locks the row and then the crawl's
// queued URLs (and skips those another transaction holds: SetCrawlState). The statements
// that change URLs an admission did not insert (an in-link's priority, a sitemap's newer
// lastmod) skip rows another transaction holds: a boost or a lastmod is a hint the URL's next
// link or sitemap brings again.
func (agg Frontier) Admit(ctx context.Context, crawlID string, cands []Candidate, rule BudgetRule, maxWake int) (AdmitResult, error) {
	s := agg.s
	res := AdmitResult{New: map[string]int{}}
	if len(cands) == 0 {
		return res, nil
	}
	// Two round trips in all: BEGIN and COMMIT ride on the two batches.
	err := s.inPipelinedTx(ctx, func(tx *pipelinedTx) error {
		res = AdmitResult{New: map[string]int{}}
		var maxPages, admitted, requisites int64
		var maxPerHost, maxHosts, hostCount int
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
		// Two round trips in the transaction, each a pipelined batch: read the crawl's budgets
		// (under its row's lock when it has any), insert the URLs and read the hosts'
		// budgets; then everything that follows from which URLs were new.
		var inserted [][]byte
		hostAdmitted := map[string]int{}
		b := &pgx.Batch{}
		// A sitemap's lastmods change URLs this admission did not insert, in the first batch:
		// they come after the crawl's row (see Admit), so such an admission takes it first.
		b.Queue(lockBudgetsSQL, crawlID, hasLastMod(cands))
		// In hash order: admissions of a crawl without budgets run side by side, and two that
		// insert the same new URLs must meet them in one order (the second waits for the
		// first's commit at the first URL they share, holding none the first needs).
		b.Queue(`INSERT INTO urls (crawl_id, url_hash, url, host, depth, hops, source, priority, change_hint_s)
			SELECT $1, h, u, ho, d, hp, s, p, nullif(ch, 0)
			FROM unnest($2::bytea[], $3::text[], $4::text[], $5::int[], $6::int[], $7::text[], $8::real[], $9::int[]) AS t(h, u, ho, d, hp, s, p, ch)
			ORDER BY h
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
			// (Rows another transaction holds are skipped: see Admit.)
			b.Queue(`WITH f AS (SELECT u.url_hash FROM urls u JOIN unnest($2::bytea[], $3::timestamptz[]) AS t(h, lm) ON u.url_hash = t.h
					WHERE u.crawl_id = $1 AND u.state = 'queued' AND u.last_fetched_at < t.lm AND u.next_fetch_at > now()
					FOR NO KEY UPDATE OF u SKIP LOCKED)
				UPDATE urls u SET next_fetch_at = now(), updated_at = now()
				FROM f WHERE u.crawl_id = $1 AND u.url_hash = f.url_hash
				RETURNING u.host`, crawlID, fwdHashes, fwdTimes)
		}
		var forwardHosts []string
		err := tx.send(ctx, b, false, func(br pgx.BatchResults) error {
			if err := br.QueryRow().Scan(&maxPages, &maxPerHost, &maxHosts, &hostCount, &admitted, &requisites, &state); err != nil {
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
		var fresh []Candidate
		seen := map[string]bool{}
		for _, c := range cands {
			key := string(c.Hash)
			if !isNew[key] || seen[key] {
				res.Duplicates++
				continue
			}
			seen[key] = true
			fresh = append(fresh, c)
		}
		verdicts := rule(Budgets{MaxPages: maxPages, Admitted: admitted, MaxPerHost: maxPerHost, MaxHosts: maxHosts,
			Hosts: hostCount, HostAdmitted: hostAdmitted, Requisites: requisites}, fresh)
		if len(verdicts) != len(fresh) {
			return fmt.Errorf("budget rule gave %d verdicts for %d new URLs", len(verdicts), len(fresh))
		}
		skipped := map[string][][]byte{} // by reason
		counted := map[string]int{}      // new URLs that count against the budgets, by host
		for i, c := range fresh {
			if why := verdicts[i].Skip; why != "" {
				skipped[why] = append(skipped[why], c.Hash)
				res.OverBudget++
				continue
			}
			res.New[c.Host]++
			if !verdicts[i].Free {
				counted[c.Host]++
			}
		}
		b = &pgx.Batch{}
		reasons := make([]string, 0, len(skipped))
		for why := range skipped {
			reasons = append(reasons, why)
		}
		sort.Strings(reasons) // (statements in a fixed order)
		for _, why := range reasons {
			b.Queue(`UPDATE urls u SET state = 'skipped', skip_reason = $3 FROM unnest($2::bytea[]) AS t(h)
				WHERE u.crawl_id = $1 AND u.url_hash = t.h`, crawlID, skipped[why], crawl.Clip(why, 200))
		}
		// Each further link to a queued URL is an in-link: it moves up its host's queue.
		var again [][]byte
		for _, c := range cands {
			if !isNew[string(c.Hash)] && c.Source == crawl.SourceLink {
				again = append(again, c.Hash)
			}
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
			total, free := 0, 0
			for h := range res.New {
				newHosts = append(newHosts, h)
			}
			sort.Strings(newHosts) // (crawl_hosts rows locked in one order by every admission)
			for _, h := range newHosts {
				c := counted[h]
				counts = append(counts, int32(c))
				total += c
				free += res.New[h] - c
			}
			// Driven from the hosts: a few key probes that nearly always find none retired, and
			// then (the one-time EXISTS filter) no URL is looked at.
			b.Queue(`WITH r AS MATERIALIZED (SELECT host, retired_reason FROM hosts WHERE host = ANY($3) AND retired_at IS NOT NULL)
				UPDATE urls u SET state = 'skipped', skip_reason = 'host retired: ' || r.retired_reason
				FROM r WHERE EXISTS (SELECT 1 FROM r) AND u.crawl_id = $1 AND u.url_hash = ANY($2) AND u.host = r.host`,
				crawlID, inserted, newHosts)
			// The crawl's host count is the rows this statement inserted (xmax 0), not the
			// hosts the rule took for new: admissions without budgets do not serialize.
			b.Queue(`WITH ch AS (INSERT INTO crawl_hosts (crawl_id, host, admitted)
					SELECT $1, h, c FROM unnest($2::text[], $3::int[]) AS t(h, c)
					ON CONFLICT (crawl_id, host) DO UPDATE SET admitted = crawl_hosts.admitted + excluded.admitted
					RETURNING xmax = 0 AS fresh)
				UPDATE crawls SET admitted = admitted + $4, hosts = hosts + (SELECT count(*) FROM ch WHERE fresh),
					requisites = requisites + $5, updated_at = now() WHERE id = $1`, crawlID, newHosts, counts, total, free)
		}
		if len(again) > 0 {
			// After the crawl's row (above): see Admit. (A queued requisite that a page links
			// becomes a link: it is read for links too.) A row another transaction holds keeps
			// its priority. (A CTE: run once, where a locking subquery in FROM is run again for
			// each row. Its lock reads the row's newest version, so boosts stays under the cap; a
			// requisite is inserted with none, and its first boost makes it a link.)
			b.Queue(`WITH l AS (SELECT url_hash FROM urls WHERE crawl_id = $1 AND url_hash = ANY($2) AND state = 'queued'
					AND boosts < $4 FOR NO KEY UPDATE SKIP LOCKED)
				UPDATE urls u SET priority = u.priority + $3, boosts = u.boosts + 1,
					source = CASE WHEN u.source = 'embed' THEN 'link' ELSE u.source END
				FROM l WHERE u.crawl_id = $1 AND u.url_hash = l.url_hash`, crawlID, again, InLinkBoost, MaxInLinkBoosts)
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
