-- Content: near-duplicate fingerprints and their index, adaptive recrawl state, the HTTP
-- exchange of each fetch (for WARC records) and the WARC files written.

-- A document's MinHash signature (its SimHash is documents.simhash), how well it matches the
-- document it duplicates (Hamming distance or estimated Jaccard), and its extracted text size.
ALTER TABLE documents
    ADD COLUMN minhash    bytea,
    ADD COLUMN dup_score  real,
    ADD COLUMN text_bytes int;

-- The near-duplicate index: each document filed under its SimHash block keys and MinHash band
-- keys (internal/dedup); a lookup probes these keys, never the corpus.
CREATE TABLE dedup_keys (
    crawl_id text NOT NULL,
    key      bigint NOT NULL,
    url_hash bytea NOT NULL,
    PRIMARY KEY (crawl_id, key, url_hash),
    FOREIGN KEY (crawl_id, url_hash) REFERENCES documents (crawl_id, url_hash) ON DELETE CASCADE
);
CREATE INDEX dedup_keys_doc ON dedup_keys (crawl_id, url_hash);

-- Adaptive recrawl: the URL's current interval (learned from its change history), the
-- interval its sitemap's <changefreq> suggests, and consecutive 404/410 answers.
ALTER TABLE urls
    ADD COLUMN recrawl_s     int,
    ADD COLUMN change_hint_s int,
    ADD COLUMN gone_count    int NOT NULL DEFAULT 0;

-- The HTTP exchange as sent and received (status line and headers), for WARC request and
-- response records; and where the fetch's records landed.
ALTER TABLE fetches
    ADD COLUMN request_head  text,
    ADD COLUMN response_head text,
    ADD COLUMN changed       boolean,
    ADD COLUMN warc_file     text,
    ADD COLUMN warc_offset   bigint,
    ADD COLUMN warc_length   bigint;
-- A WARC revisit record refers to the first capture of the same payload.
CREATE INDEX fetches_content ON fetches (crawl_id, content_hash) WHERE content_hash IS NOT NULL;
CREATE INDEX fetches_unarchived ON fetches (crawl_id, id) WHERE warc_file IS NULL AND status IS NOT NULL;

CREATE TABLE warc_files (
    crawl_id   text NOT NULL REFERENCES crawls(id) ON DELETE CASCADE,
    name       text NOT NULL,                   -- object key in the bucket
    cdx_key    text NOT NULL,                   -- object key of its CDXJ index
    records    int NOT NULL,
    bytes      bigint NOT NULL,
    first_id   bigint NOT NULL,                 -- fetches.id range it covers
    last_id    bigint NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (crawl_id, name)
);
