-- Bodies addressed by their digest. A payload is a body a crawl holds: its SHA-256 (the WARC
-- payload digest), where it is stored, and the capture that stored it first (URL and time, for
-- a revisit record's WARC-Refers-To-*). A crawl that finds a payload it, or a crawl it
-- deduplicates against (spec.dedupAgainst), already holds stores no second copy: its fetch
-- points at the stored one. owner_crawl is the crawl whose segments hold the bytes; a row whose
-- owner is another crawl keeps those bytes alive when the owner is deleted.
CREATE TABLE IF NOT EXISTS payloads (
    content_hash bytea       NOT NULL,
    crawl_id     text        NOT NULL,
    owner_crawl  text        NOT NULL,
    body_key     text        NOT NULL,
    url          text        NOT NULL,
    fetched_at   timestamptz NOT NULL,
    PRIMARY KEY (content_hash, crawl_id)
);
CREATE INDEX IF NOT EXISTS payloads_crawl ON payloads (crawl_id);
CREATE INDEX IF NOT EXISTS payloads_borrowed ON payloads (owner_crawl) WHERE owner_crawl <> crawl_id;

-- The URL's last stored body: an unchanged 200 points its fetch at it instead of storing it
-- again (the claim hands it to the fetch).
ALTER TABLE urls ADD COLUMN IF NOT EXISTS body_key text;
