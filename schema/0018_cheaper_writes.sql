-- Writes a fetched page pays for, made cheaper (issue 16).
--
-- urls_claim was never read: the claim and the host's next-due look both read urls_host_due
-- (pg_stat_user_indexes over a bench run: 0 scans), yet every queued row and every priority
-- boost inserted into it.
DROP INDEX urls_claim;

-- A document files 13 near-duplicate keys; the foreign key checked each against documents
-- with a query of its own (SPI), the most frequent statement Postgres ran in a bench run
-- (13 a page). What the foreign key was for, a document's keys going with it, a statement
-- trigger does once per deleting statement (cascades from urls and crawls included).
ALTER TABLE dedup_keys DROP CONSTRAINT dedup_keys_crawl_id_url_hash_fkey;

CREATE FUNCTION documents_drop_keys() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM dedup_keys k USING gone g WHERE k.crawl_id = g.crawl_id AND k.url_hash = g.url_hash;
    RETURN NULL;
END
$$;

CREATE TRIGGER documents_keys_gone AFTER DELETE ON documents REFERENCING OLD TABLE AS gone
    FOR EACH STATEMENT EXECUTE FUNCTION documents_drop_keys();
