-- Deliveries read a crawl's documents in save order from a queue of their own, written only
-- for crawls with outputs: an index on documents (0034's documents_stored) cost every crawl
-- 0.35 ms of Postgres CPU a page (make bench, 2026-11-27). A row is (the crawl, the
-- transaction that saved or changed the document, its URL hash); a document saved again with a
-- new payload gets a new row, and the older one no longer matches documents.stored_tx.
DROP INDEX IF EXISTS documents_stored;
CREATE TABLE IF NOT EXISTS delivery_queue (
    crawl_id  text  NOT NULL REFERENCES crawls (id) ON DELETE CASCADE,
    stored_tx xid8  NOT NULL,
    url_hash  bytea NOT NULL,
    PRIMARY KEY (crawl_id, stored_tx, url_hash)
);
