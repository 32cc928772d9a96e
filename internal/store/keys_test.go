package store_test

import (
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

// The five foreign keys schema 0040 checks by statement are gone: with them and the triggers
// both, every row would be checked twice (and the tests here would pass on the keys alone).
func TestNoForeignKeyIsCheckedTwice(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	var n int
	if err := s.Pool().QueryRow(ctx, `SELECT count(*) FROM pg_constraint WHERE contype = 'f'
		AND conrelid::regclass::text IN ('urls', 'payloads', 'crawl_hosts', 'fetches', 'documents')
		AND confrelid::regclass::text IN ('crawls', 'urls')`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d foreign keys left on the tables checked by statement (%v)", n, err)
	}
}

// Each insert holds its crawl's row against a delete until it commits: the delete's first step
// (its row FOR UPDATE) waits. A delete that locked the crawl first makes an insert naming it
// wait, then fail with the key's error. And a crawl's rows go with its row.
func TestACrawlsRowsGoWithItAndItsInsertsFirst(t *testing.T) {
	s, ctx := newStore(t, 0, 0)
	pool := s.Pool()
	saved := []byte("0123456789abcdef")
	if _, err := pool.Exec(ctx, `INSERT INTO urls (crawl_id, url_hash, url, host) VALUES ('c', $1, 'http://k.test/', 'k.test')`, saved); err != nil {
		t.Fatal(err)
	}
	for _, q := range []struct{ what, sql string }{
		{"a URL", `INSERT INTO urls (crawl_id, url_hash, url, host) SELECT 'c', 'fedcba9876543210', 'http://k.test/2', 'k.test' WHERE $1::bytea IS NOT NULL`},
		{"a fetch", `INSERT INTO fetches (crawl_id, url_hash, fetch_key, fetched_at) VALUES ('c', $1, 'k', now())`},
		{"a document", `INSERT INTO documents (crawl_id, url_hash, content_hash, body_key, size) VALUES ('c', $1, $1, 'b', 1)`},
		{"a payload", `INSERT INTO payloads (content_hash, crawl_id, owner_crawl, body_key, url, fetched_at) VALUES ($1, 'c', 'c', 'b', 'u', now())`},
		{"a host", `INSERT INTO crawl_hosts (crawl_id, host) SELECT 'c', 'k.test' WHERE $1::bytea IS NOT NULL`},
	} {
		tx, err := pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, q.sql, saved); err != nil {
			t.Fatalf("%s: %v", q.what, err)
		}
		err = pgx.BeginFunc(ctx, pool, func(del pgx.Tx) error {
			if _, err := del.Exec(ctx, `SET LOCAL lock_timeout = '200ms'`); err != nil {
				return err
			}
			_, err := del.Exec(ctx, `SELECT 1 FROM crawls WHERE id = 'c' FOR UPDATE`)
			return err
		})
		var pg *pgconn.PgError
		if !errors.As(err, &pg) || pg.Code != "55P03" {
			t.Errorf("a delete's lock on the crawl while an insert of %s naming it is open: got %v, want it to wait (lock timeout)", q.what, err)
		}
		if err := tx.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
	}

	var n int
	if err := pool.QueryRow(ctx, keyRows, "c", []byte("fedcba9876543210")).Scan(&n); err != nil || n != 5 {
		t.Fatalf("rows written %d, %v", n, err)
	}
	del, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer del.Rollback(ctx) //nolint:errcheck // after a commit, a no-op
	if _, err := del.Exec(ctx, `SELECT 1 FROM crawls WHERE id = 'c' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	inserted := make(chan error, 1)
	go func() {
		_, err := pool.Exec(ctx, `INSERT INTO urls (crawl_id, url_hash, url, host) VALUES ('c', 'late-url-hash-01', 'http://k.test/late', 'k.test')`)
		inserted <- err
	}()
	select {
	case err := <-inserted:
		t.Fatalf("an insert naming a crawl locked for its delete did not wait: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	if _, err := del.Exec(ctx, `DELETE FROM crawls WHERE id = 'c'`); err != nil {
		t.Fatal(err)
	}
	if err := del.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-inserted:
		if !isKeyError(err) {
			t.Errorf("an insert that waited for its crawl's delete: got %v, want a foreign-key violation", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("an insert still waits after its crawl's delete committed")
	}
	for _, table := range []string{"urls", "fetches", "documents", "payloads", "crawl_hosts"} {
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM `+table+` WHERE crawl_id = 'c'`).Scan(&n); err != nil || n != 0 {
			t.Errorf("%s: %d rows of the deleted crawl remain (%v)", table, n, err)
		}
	}
}
