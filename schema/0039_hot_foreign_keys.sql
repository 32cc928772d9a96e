-- Foreign keys on the tables a page writes are checked row by row: each URL admitted, each
-- fetch, each document and each new payload ran a query of its own (SPI) that took a KEY
-- SHARE lock on the parent row, for URLs and payloads the crawl's one row, which every
-- admission of the crawl also updates (issue 49). Nothing in Trawler deletes a parent before
-- its children (store.crawlTables deletes children first), so what these keys were still for
-- is their cascade: statement triggers below do it once per deleting statement, as
-- documents_keys_gone does for near-duplicate keys since 0018. The foreign keys on tables
-- written once per crawl or per host stay.
ALTER TABLE urls DROP CONSTRAINT IF EXISTS urls_crawl_id_fkey;
ALTER TABLE fetches DROP CONSTRAINT IF EXISTS fetches_crawl_id_url_hash_fkey;
ALTER TABLE documents DROP CONSTRAINT IF EXISTS documents_crawl_id_url_hash_fkey;
ALTER TABLE payloads DROP CONSTRAINT IF EXISTS payloads_crawl_fk;

-- A deleted URL takes its fetches and its document (and, by documents_keys_gone, its keys).
CREATE FUNCTION urls_drop_children() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM fetches f USING gone g WHERE f.crawl_id = g.crawl_id AND f.url_hash = g.url_hash;
    DELETE FROM documents d USING gone g WHERE d.crawl_id = g.crawl_id AND d.url_hash = g.url_hash;
    RETURN NULL;
END
$$;

CREATE TRIGGER urls_children_gone AFTER DELETE ON urls REFERENCING OLD TABLE AS gone
    FOR EACH STATEMENT EXECUTE FUNCTION urls_drop_children();

-- A deleted crawl takes its URLs (and so their fetches and documents) and its payloads.
CREATE FUNCTION crawls_drop_children() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM urls u USING gone g WHERE u.crawl_id = g.id;
    DELETE FROM payloads p USING gone g WHERE p.crawl_id = g.id;
    RETURN NULL;
END
$$;

CREATE TRIGGER crawls_children_gone AFTER DELETE ON crawls REFERENCING OLD TABLE AS gone
    FOR EACH STATEMENT EXECUTE FUNCTION crawls_drop_children();
