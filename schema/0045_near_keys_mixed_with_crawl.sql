-- The near-duplicate index is keyed by one bigint: a document's key mixed with its crawl,
-- hashtextextended(crawl_id, key) (store.nearKeySQL names it for every statement; the
-- trigger below repeats it), in place of (crawl_id text, key bigint). Its entries are a third
-- narrower and compare as integers, not as text under the database's collation: on 4 million
-- keys, probing 2,000 documents' keys read 29% fewer buffers in 33% less time, filing them 20%
-- fewer in 30% less (issue 49: the index was 28% of what Postgres read). Two crawls' keys
-- meeting on one bigint (about one chance in 2^64) cost at most a candidate, judged by its
-- fingerprint like any other.
-- The index is derived (0036) and unlogged (0037): it is emptied here, and the next save of a
-- document rebuilds it from documents.dedup_keys, as after a crash (store.rebuildNearIndex).
-- Each entry holds its document's SimHash too, in the index (INCLUDE): a lookup under one of
-- the SimHash's 16-bit blocks keeps only documents within the crawl's SimHash distance before
-- it reads any (store.nearCandidatesSQL). About one document in 65,536 shares a given block by
-- chance, so a crawl's random candidates grew with it: 4.8 a document read and sent back,
-- verified and dropped, over a 4-minute bench of 155,000 documents; 61 at a million.
-- Process workers of the release before fail their saves until they are upgraded (their
-- statements name dedup_keys.crawl_id); the saves are retried (README, Upgrading workers).
DROP TABLE IF EXISTS dedup_keys;
CREATE UNLOGGED TABLE dedup_keys (key bigint NOT NULL, url_hash bytea NOT NULL, simhash bigint NOT NULL);
CREATE INDEX dedup_keys_key ON dedup_keys (key, url_hash) INCLUDE (simhash);
DELETE FROM dedup_keys_state;

-- A deleted document's keys go with it (0018, 0036), found by their mixed key.
CREATE OR REPLACE FUNCTION documents_drop_keys() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM dedup_keys k
        USING (SELECT hashtextextended(g.crawl_id, x) AS key, g.url_hash FROM gone g CROSS JOIN unnest(g.dedup_keys) x
            WHERE g.dedup_keys IS NOT NULL) o
        WHERE k.key = o.key AND k.url_hash = o.url_hash;
    RETURN NULL;
END
$$;
