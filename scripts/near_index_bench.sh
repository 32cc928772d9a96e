#!/usr/bin/env bash
# near_index_bench.sh N: how the near-duplicate index's lookups cost with N documents stored
# in one crawl, before and after schema 0045 checked SimHash blocks in the index (BENCHMARKS.md,
# 2026-11-29 17:36). A scratch database beside the stack's (make up first), dropped at the end.
# Each document has a random 64-bit SimHash filed under its four 16-bit blocks and 16 band keys;
# a quarter of the 2,000 lookers of each round copy a stored document.
#   A: every document under a looker's keys is read from documents (the lookup before 0045);
#   B: under a SimHash block, only documents within 3 bits, checked in the index (since 0045).
set -euo pipefail
n=${1:?usage: $0 documents}
cd "$(dirname "$0")/.."
eval "$(scripts/stack.sh env)"
base="${DATABASE_URL%/trawler*}"
psql "$DATABASE_URL" -qc "DROP DATABASE IF EXISTS near_index_bench" -c "CREATE DATABASE near_index_bench"
trap 'psql "$DATABASE_URL" -qc "DROP DATABASE IF EXISTS near_index_bench"' EXIT
db="$base/near_index_bench?sslmode=disable"
crawl=bench-20261129-1234abcd
psql "$db" -q -v n="$n" -v c="$crawl" <<'SQL'
SET client_min_messages = warning;
CREATE FUNCTION sh(seed int) RETURNS bigint LANGUAGE sql IMMUTABLE AS $$ SELECT hashint8extended(seed::bigint, 7) $$;
CREATE FUNCTION keys(seed int) RETURNS bigint[] LANGUAGE sql IMMUTABLE AS $$
  SELECT array(SELECT (i::bigint << 16) | ((sh(seed) >> (16 * i)) & 65535) FROM generate_series(0, 3) i)
      || array(SELECT hashint8extended(seed::bigint * 100 + b, 0) FROM generate_series(0, 15) b) $$;
CREATE TABLE nd (crawl_id text, url_hash bytea, simhash bigint, minhash bytea, pad text, PRIMARY KEY (crawl_id, url_hash));
CREATE UNLOGGED TABLE ka (key bigint NOT NULL, url_hash bytea NOT NULL);
CREATE INDEX ka_key ON ka (key, url_hash);
CREATE UNLOGGED TABLE kb (key bigint NOT NULL, url_hash bytea NOT NULL, simhash bigint NOT NULL);
CREATE INDEX kb_key ON kb (key, url_hash) INCLUDE (simhash);
INSERT INTO nd SELECT :'c', decode(md5(g::text), 'hex'), sh(g), decode(repeat(md5(g::text), 16), 'hex'), repeat('x', 300)
  FROM generate_series(1, :n) g;
INSERT INTO ka SELECT hashtextextended(:'c', unnest(keys(g))), decode(md5(g::text), 'hex') FROM generate_series(1, :n) g;
INSERT INTO kb SELECT hashtextextended(:'c', unnest(keys(g))), decode(md5(g::text), 'hex'), sh(g) FROM generate_series(1, :n) g;
VACUUM ANALYZE nd; VACUUM ANALYZE ka; VACUUM ANALYZE kb;
SQL
# (nested loops, as the store's LATERAL lookups run)
export PGOPTIONS="-c enable_hashjoin=off -c enable_mergejoin=off"
explain="EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, SUMMARY ON)"
for r in 1 2 3; do
  lo=$((2000000 + r * 2000))
  psql "$db" -qc "DROP TABLE IF EXISTS looks; CREATE TABLE looks AS
    SELECT i, s, sh(s) AS sh, unnest(keys(s)) AS key, generate_subscripts(keys(s), 1) <= 4 AS block
    FROM (SELECT g AS i, CASE WHEN g % 4 = 0 THEN g % $n + 1 ELSE g END AS s FROM generate_series($lo, $lo + 1999) g) x; ANALYZE looks"
  echo "== round $r: 2,000 lookups, $n documents stored"
  echo "-- A: every document under the keys read"
  psql "$db" -c "$explain SELECT q.i, d.url_hash, d.simhash, d.minhash FROM looks q
    CROSS JOIN LATERAL (SELECT url_hash FROM ka k WHERE k.key = hashtextextended('$crawl', q.key)) k
    CROSS JOIN LATERAL (SELECT url_hash, simhash, minhash FROM nd d WHERE d.crawl_id = '$crawl' AND d.url_hash = k.url_hash) d" |
    grep -E "Execution Time|^   Buffers: shared hit=[0-9]{4}|^ Nested Loop"
  echo "-- B: SimHash blocks checked in the index"
  psql "$db" -c "$explain SELECT q.i, d.url_hash, d.simhash, d.minhash FROM looks q
    CROSS JOIN LATERAL (SELECT url_hash FROM kb k WHERE k.key = hashtextextended('$crawl', q.key)
      AND (NOT q.block OR bit_count(int8send(k.simhash # q.sh)) <= 3)) k
    CROSS JOIN LATERAL (SELECT url_hash, simhash, minhash FROM nd d WHERE d.crawl_id = '$crawl' AND d.url_hash = k.url_hash) d" |
    grep -E "Execution Time|^   Buffers: shared hit=[0-9]{4}|^ Nested Loop"
done
