-- The near-duplicate index files a document's keys with plain inserts. Its primary key made
-- each key's insert a speculative one (ON CONFLICT DO NOTHING): the index was searched once
-- for a conflict and again to insert, about 7 buffers a key where a plain insert reads 4
-- (issue 49: filing keys was a fifth of what Postgres read). Nothing needs the keys unique: a
-- save clears what the document filed before under its row's lock, and a lookup reads
-- distinct documents, so a key filed twice would cost a row, never a wrong answer.
ALTER TABLE dedup_keys DROP CONSTRAINT IF EXISTS dedup_keys_pkey;
CREATE INDEX IF NOT EXISTS dedup_keys_key ON dedup_keys (crawl_id, key, url_hash);
