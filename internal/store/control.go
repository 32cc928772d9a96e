package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// DeadLetterFilter selects dead letters: by exact host and by a substring of the reason
// (case-insensitive); empty fields match everything.
type DeadLetterFilter struct {
	Host   string `json:"host,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// DeadLettersWhere lists a crawl's unreplayed dead letters matching f, newest first.
func (agg Fetches) DeadLettersWhere(ctx context.Context, crawlID string, f DeadLetterFilter, limit int) ([]DeadLetter, error) {
	s := agg.s
	rows, err := s.pool.Query(ctx, `SELECT id, crawl_id, url, host, reason, attempts::text, created_at FROM dead_letters
		WHERE crawl_id = $1 AND replayed_at IS NULL AND ($2 = '' OR host = $2) AND ($3 = '' OR reason ILIKE '%' || $3 || '%')
		ORDER BY created_at DESC, id DESC LIMIT $4`, crawlID, f.Host, escapeLike(f.Reason), limit)
	if err != nil {
		return nil, fmt.Errorf("store: dead letters: %w", err)
	}
	return pgx.CollectRows(rows, scanDeadLetter)
}

func scanDeadLetter(r pgx.CollectableRow) (DeadLetter, error) {
	var d DeadLetter
	var attempts string
	err := r.Scan(&d.ID, &d.CrawlID, &d.URL, &d.Host, &d.Reason, &attempts, &d.Created)
	d.Attempts = []byte(attempts)
	return d, err
}

func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// AddSeeds records seeds added to a running crawl in its spec, so its scope (hosts or domains
// of the seeds) takes them in.
func (agg Crawls) AddSeeds(ctx context.Context, crawlID string, seeds []string) error {
	s := agg.s
	return s.editSpec(ctx, crawlID, func(spec map[string]any) {
		spec["seeds"] = appendUnique(spec["seeds"], seeds)
	})
}

// ThrottleCrawl slows every host of a crawl (its spec's throttle: at least delay between
// request starts, at most concurrency in flight), on top of what earlier throttles set, or
// ends the throttle (reset). Leases read it with the crawl's rules, within seconds.
func (agg Crawls) ThrottleCrawl(ctx context.Context, crawlID string, delay time.Duration, concurrency int, reset bool) error {
	s := agg.s
	return s.editSpec(ctx, crawlID, func(spec map[string]any) {
		if reset {
			delete(spec, "throttle")
		}
		if delay <= 0 && concurrency <= 0 {
			return
		}
		t, _ := spec["throttle"].(map[string]any)
		if t == nil {
			t = map[string]any{}
		}
		if delay > 0 {
			t["delay"] = delay.String()
		}
		if concurrency > 0 {
			t["concurrency"] = concurrency
		}
		spec["throttle"] = t
	})
}

// editSpec changes a crawl's stored spec under a row lock.
func (s *Store) editSpec(ctx context.Context, crawlID string, edit func(map[string]any)) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error { return editSpecTx(ctx, tx, crawlID, edit) })
	if err != nil {
		return fmt.Errorf("store: edit spec of %s: %w", crawlID, err)
	}
	return nil
}

func editSpecTx(ctx context.Context, tx pgx.Tx, crawlID string, edit func(map[string]any)) error {
	var raw []byte
	// FOR NO KEY UPDATE: a recorded fetch holds its crawl's row FOR KEY SHARE (the payloads'
	// foreign key) with its URL rows locked, and a block then updates those URLs; FOR UPDATE
	// would wait on the fetch while the fetch waits on it.
	if err := tx.QueryRow(ctx, `SELECT spec FROM crawls WHERE id = $1 FOR NO KEY UPDATE`, crawlID).Scan(&raw); err != nil {
		return fmt.Errorf("read spec: %w", err)
	}
	var spec map[string]any
	if err := json.Unmarshal(raw, &spec); err != nil {
		return fmt.Errorf("decode spec: %w", err)
	}
	edit(spec)
	raw, err := json.Marshal(spec)
	if err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `UPDATE crawls SET spec = $2, updated_at = now() WHERE id = $1`, crawlID, raw); err != nil {
		return fmt.Errorf("save spec: %w", err)
	}
	return nil
}

// ReplayDeadLetters queues the dead URLs matching f again with a fresh attempt count, marks
// their dead letters replayed and returns the hosts to wake with how many URLs each got back.
func (agg Crawls) ReplayDeadLetters(ctx context.Context, crawlID string, f DeadLetterFilter) (map[string]int, error) {
	s := agg.s
	hosts := map[string]int{}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `WITH d AS (
				UPDATE dead_letters SET replayed_at = now()
				WHERE crawl_id = $1 AND replayed_at IS NULL AND ($2 = '' OR host = $2) AND ($3 = '' OR reason ILIKE '%' || $3 || '%')
				RETURNING url_hash)
			UPDATE urls u SET state = 'queued', attempts = 0, next_fetch_at = now(), claimed_until = NULL, updated_at = now()
			FROM (SELECT DISTINCT url_hash FROM d) d
			WHERE u.crawl_id = $1 AND u.url_hash = d.url_hash AND u.state = 'dead' RETURNING u.host`,
			crawlID, f.Host, escapeLike(f.Reason))
		if err != nil {
			return err
		}
		hs, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		for _, h := range hs {
			hosts[h]++
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: replay dead letters of %s: %w", crawlID, err)
	}
	return hosts, nil
}

// Block adds hosts and URL patterns to a crawl's deny lists (its stored spec, which every
// worker reloads within seconds) and skips its queued URLs they match, reason "blocked". Host
// entries match the host and its subdomains; patterns are regular expressions (Go syntax;
// the queued URLs are matched in Postgres, whose regular expressions agree with Go's on the
// common syntax). It returns how many queued or claimed URLs it skipped.
func (agg Crawls) Block(ctx context.Context, crawlID string, hosts, patterns []string) (int64, error) {
	s := agg.s
	var skipped int64
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := editSpecTx(ctx, tx, crawlID, func(spec map[string]any) {
			spec["denyHosts"] = appendUnique(spec["denyHosts"], hosts)
			spec["denyPatterns"] = appendUnique(spec["denyPatterns"], patterns)
		}); err != nil {
			return err
		}
		suffixes := make([]string, len(hosts))
		for i, h := range hosts {
			suffixes[i] = "%." + escapeLike(h)
		}
		tag, err := tx.Exec(ctx, `UPDATE urls SET state = 'skipped', skip_reason = 'blocked', updated_at = now()
			WHERE crawl_id = $1 AND (state = 'queued' OR state = 'claimed') AND (host = ANY($2) OR host LIKE ANY($3) OR url ~ ANY($4))`,
			crawlID, hosts, suffixes, patterns)
		if err != nil {
			return fmt.Errorf("skip blocked URLs: %w", err)
		}
		skipped = tag.RowsAffected()
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("store: block on %s: %w", crawlID, err)
	}
	return skipped, nil
}

func appendUnique(list any, add []string) []any {
	out, _ := list.([]any)
	have := map[string]bool{}
	for _, v := range out {
		if s, ok := v.(string); ok {
			have[s] = true
		}
	}
	for _, v := range add {
		if !have[v] {
			have[v] = true
			out = append(out, v)
		}
	}
	return out
}
