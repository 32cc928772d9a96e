package store_test

import (
	"bytes"
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/trawlerdev/trawler/internal/store"
	"github.com/trawlerdev/trawler/internal/testenv"
)

func TestMigrationsAreNumberedAndOrdered(t *testing.T) {
	ms, err := store.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) == 0 || ms[0].Version != 1 {
		t.Fatalf("migrations = %v", ms)
	}
	for i, m := range ms {
		if m.Version != i+1 {
			t.Errorf("migration %d is numbered %04d: numbers must be consecutive", i, m.Version)
		}
	}
}

func TestMigrateIsIdempotentAndConcurrencySafe(t *testing.T) {
	pool, dbURL := testenv.Postgres(t) // already migrated once
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `DROP SCHEMA public CASCADE; CREATE SCHEMA public`); err != nil {
		t.Fatal(err)
	}
	// Eight processes' worth of pools migrate the empty database at once.
	var wg sync.WaitGroup
	applied := make([][]int, 8)
	errs := make([]error, 8)
	for i := range applied {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, err := store.Open(ctx, dbURL)
			if err != nil {
				errs[i] = err
				return
			}
			defer p.Close()
			applied[i], errs[i] = store.Migrate(ctx, p)
		}()
	}
	wg.Wait()
	total := 0
	for i := range applied {
		if errs[i] != nil {
			t.Fatalf("migrator %d: %v", i, errs[i])
		}
		total += len(applied[i])
	}
	ms, _ := store.Migrations()
	if total != len(ms) {
		t.Fatalf("%d migrations applied in all, want each of %d exactly once", total, len(ms))
	}
	again, err := store.Migrate(ctx, pool)
	if err != nil || len(again) != 0 {
		t.Fatalf("second migrate applied %v, err %v; want nothing", again, err)
	}
}

func TestRowRoundTrip(t *testing.T) {
	pool, _ := testenv.Postgres(t)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `INSERT INTO crawls (id, spec) VALUES ('c1', '{"seeds":["https://example.com/"]}')`); err != nil {
		t.Fatal(err)
	}
	hash := []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	if _, err := pool.Exec(ctx, `INSERT INTO urls (crawl_id, url_hash, url, host, depth) VALUES ('c1', $1, 'https://example.com/', 'example.com', 0)`, hash); err != nil {
		t.Fatal(err)
	}
	var gotHash []byte
	var url, state string
	var seeds string
	if err := pool.QueryRow(ctx, `SELECT u.url_hash, u.url, u.state, c.spec->'seeds'->>0 FROM urls u JOIN crawls c ON c.id = u.crawl_id`).
		Scan(&gotHash, &url, &state, &seeds); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(gotHash, hash) || url != "https://example.com/" || state != "queued" || seeds != "https://example.com/" {
		t.Fatalf("round trip: %x %s %s %s", gotHash, url, state, seeds)
	}
	// The frontier's identity is (crawl, url hash): a second admission must conflict.
	_, err := pool.Exec(ctx, `INSERT INTO urls (crawl_id, url_hash, url, host) VALUES ('c1', $1, 'https://example.com/', 'example.com')`, hash)
	if err == nil {
		t.Fatal("duplicate URL admitted twice")
	}
}

// applyMigrationAgain runs migration version once more, in a transaction, on a database a test
// has put back as the migrations before it left it.
func applyMigrationAgain(t *testing.T, ctx context.Context, pool *pgxpool.Pool, version int) {
	t.Helper()
	migrations, err := store.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(migrations, func(m store.Migration) bool { return m.Version == version })
	if i < 0 {
		t.Fatalf("no migration %04d", version)
	}
	if err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, migrations[i].SQL)
		return err
	}); err != nil {
		t.Fatalf("migration %04d: %v", version, err)
	}
}
