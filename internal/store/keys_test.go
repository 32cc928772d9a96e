package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// keyRows are one of each row schema 0040 checks by statement, for crawl c and URL u.
const keyRows = `WITH u AS (INSERT INTO urls (crawl_id, url_hash, url, host) VALUES ($1, $2, 'http://k.test/', 'k.test') RETURNING 1),
	f AS (INSERT INTO fetches (crawl_id, url_hash, fetch_key, fetched_at) VALUES ($1, $2, $1 || 'k', now()) RETURNING 1),
	d AS (INSERT INTO documents (crawl_id, url_hash, content_hash, body_key, size) VALUES ($1, $2, $2, 'b', 1) RETURNING 1),
	p AS (INSERT INTO payloads (content_hash, crawl_id, owner_crawl, body_key, url, fetched_at) VALUES ($2, $1, $1, 'b', 'http://k.test/', now()) RETURNING 1),
	h AS (INSERT INTO crawl_hosts (crawl_id, host) VALUES ($1, 'k.test') RETURNING 1)
	SELECT (SELECT count(*) FROM u) + (SELECT count(*) FROM f) + (SELECT count(*) FROM d) + (SELECT count(*) FROM p) + (SELECT count(*) FROM h)`

func isKeyError(err error) bool {
	var pg *pgconn.PgError
	return errors.As(err, &pg) && pg.Code == "23503"
}

// A row naming a crawl or a URL that is not there is refused with the key's error, as the
// foreign keys did before schema 0040 checked them once a statement.
func TestRowsNeedTheirCrawlAndURL(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	hash := []byte("0123456789abcdef")
	pool := s.Pool()
	for _, q := range []struct{ what, sql string }{
		{"a URL of no crawl", `INSERT INTO urls (crawl_id, url_hash, url, host) VALUES ('nope', $1, 'http://k.test/', 'k.test')`},
		{"a payload of no crawl", `INSERT INTO payloads (content_hash, crawl_id, owner_crawl, body_key, url, fetched_at) VALUES ($1, 'nope', 'nope', 'b', 'u', now())`},
		{"a host of no crawl", `INSERT INTO crawl_hosts (crawl_id, host) SELECT 'nope', 'k.test' WHERE $1::bytea IS NOT NULL`},
		{"a fetch of no URL", `INSERT INTO fetches (crawl_id, url_hash, fetch_key, fetched_at) VALUES ('c', $1, 'k', now())`},
		{"a document of no URL", `INSERT INTO documents (crawl_id, url_hash, content_hash, body_key, size) VALUES ('c', $1, $1, 'b', 1)`},
		{"a fetch of no crawl", `INSERT INTO fetches (crawl_id, url_hash, fetch_key, fetched_at) VALUES ('nope', $1, 'k', now())`},
	} {
		if _, err := pool.Exec(ctx, q.sql, hash); !isKeyError(err) {
			t.Errorf("%s: got %v, want a foreign-key violation", q.what, err)
		}
	}
	// One statement inserting rows of a present crawl and an absent one is refused whole.
	_, err := pool.Exec(ctx, `INSERT INTO crawl_hosts (crawl_id, host) VALUES ('c', 'x.test'), ('nope', 'x.test')`)
	if !isKeyError(err) {
		t.Errorf("a statement naming one absent crawl: got %v, want a foreign-key violation", err)
	}
	var n int
	if err := pool.QueryRow(ctx, keyRows, "c", hash).Scan(&n); err != nil || n != 5 {
		t.Fatalf("rows of a present crawl and URL: %d written, %v", n, err)
	}
}

// An insert holds its crawl's row against a delete until it commits: the delete's first step
// (its row FOR UPDATE) waits, then finds and deletes what the insert wrote. And a crawl's rows
// go with it when its row is deleted.
func TestACrawlsRowsGoWithItAndItsInsertsFirst(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	pool := s.Pool()
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // after a commit, a no-op
	var n int
	if err := tx.QueryRow(ctx, keyRows, "c", []byte("0123456789abcdef")).Scan(&n); err != nil || n != 5 {
		t.Fatalf("rows written %d, %v", n, err)
	}
	err = pgx.BeginFunc(ctx, pool, func(del pgx.Tx) error {
		if _, err := del.Exec(ctx, `SET LOCAL lock_timeout = '300ms'`); err != nil {
			return err
		}
		_, err := del.Exec(ctx, `SELECT 1 FROM crawls WHERE id = 'c' FOR UPDATE`)
		return err
	})
	var pg *pgconn.PgError
	if !errors.As(err, &pg) || pg.Code != "55P03" {
		t.Fatalf("a delete's lock on the crawl while an insert naming it is open: got %v, want it to wait (lock timeout)", err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := pool.Exec(dctx, `DELETE FROM crawls WHERE id = 'c'`); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"urls", "fetches", "documents", "payloads", "crawl_hosts"} {
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM `+table+` WHERE crawl_id = 'c'`).Scan(&n); err != nil || n != 0 {
			t.Errorf("%s: %d rows of the deleted crawl remain (%v)", table, n, err)
		}
	}
}
