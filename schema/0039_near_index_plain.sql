-- The near-duplicate index files a document's keys with plain inserts. Its primary key made
-- each key's insert a speculative one (ON CONFLICT DO NOTHING): the index was searched once
-- for a conflict and again to insert, about 7 buffers a key where a plain insert reads 4
-- (issue 49: filing keys was a fifth of what Postgres read). Nothing needs the keys unique: a
-- save clears what the document filed before under its row's lock, and a lookup reads
-- distinct documents, so a key filed twice would cost a row, never a wrong answer.
-- The index is built while the table is locked: saves of documents wait for it (11.5 s for 5
-- million keys on a 2-core box; README, "Upgrading workers").
SET LOCAL maintenance_work_mem = '256MB';
ALTER TABLE dedup_keys DROP CONSTRAINT IF EXISTS dedup_keys_pkey;
CREATE INDEX IF NOT EXISTS dedup_keys_key ON dedup_keys (crawl_id, key, url_hash);
