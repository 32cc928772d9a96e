-- Deleting crawls (trawler delete, TRAWLER_RETENTION). A payload row belongs to its crawl: one
-- filed late for a crawl being deleted fails instead of keeping another crawl's bytes forever.
-- object_deletes holds the objects a delete decided to remove but has not yet removed (bytes
-- borrowed from crawls deleted before), so a delete cut short is finished by the next.
DELETE FROM payloads p WHERE NOT EXISTS (SELECT 1 FROM crawls c WHERE c.id = p.crawl_id);
ALTER TABLE payloads DROP CONSTRAINT IF EXISTS payloads_crawl_fk;
ALTER TABLE payloads ADD CONSTRAINT payloads_crawl_fk FOREIGN KEY (crawl_id) REFERENCES crawls(id) ON DELETE CASCADE;
CREATE TABLE IF NOT EXISTS object_deletes (
    key        text PRIMARY KEY,
    crawl_id   text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
