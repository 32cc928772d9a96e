-- The crawl's and the URL's keys checked once a statement, not once a row (issue 49).
--
-- Every row inserted into urls, payloads and crawl_hosts checked its crawl, and every row of
-- fetches and documents its URL, each with a query of its own (SPI) that locked the parent
-- row: 6.1 queries a fetched page in make bench's pg_stat_statements (2026-11-28), 2 M buffers
-- a run, and a MultiXact on the crawls row whenever two transactions held it at once.
--
-- A statement trigger keeps what the keys promised, once a statement:
--   * it locks each crawl the statement's rows name, FOR KEY SHARE as the key did, and fails
--     with the key's error (23503) when one is missing: no row is written for a crawl that is
--     not there, and a crawl's delete (which takes its row FOR UPDATE first, store/delete.go)
--     waits for every insert naming it to commit, then deletes what it wrote;
--   * fetches and documents also find their URLs. A URL's row goes only with its crawl, under
--     that lock, so the crawl's lock keeps the URLs found until the insert commits.
-- Deletes cascade as the keys did, by statement triggers, as 0018 does for dedup_keys.

DO $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT conrelid::regclass AS t, conname FROM pg_constraint
        WHERE contype = 'f' AND (conrelid::regclass, confrelid::regclass) IN (
            ('urls'::regclass, 'crawls'::regclass), ('payloads'::regclass, 'crawls'::regclass),
            ('crawl_hosts'::regclass, 'crawls'::regclass),
            ('fetches'::regclass, 'urls'::regclass), ('documents'::regclass, 'urls'::regclass))
    LOOP
        EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', r.t, r.conname);
    END LOOP;
END
$$;

-- need_crawls locks the crawls ids names FOR KEY SHARE until commit, failing with the key's
-- error (for an insert into table) when one is not there.
CREATE FUNCTION need_crawls(tbl text, ids text[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    missing text;
BEGIN
    SELECT n INTO missing FROM unnest(ids) n
        WHERE NOT EXISTS (SELECT 1 FROM crawls c WHERE c.id = n FOR KEY SHARE)
        LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'insert into % names crawl %, which is not there', tbl, missing
            USING ERRCODE = 'foreign_key_violation';
    END IF;
END
$$;

-- rows_need_crawl: the inserted rows' crawls exist, each locked until commit.
CREATE FUNCTION rows_need_crawl() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM need_crawls(TG_TABLE_NAME, ARRAY(SELECT DISTINCT crawl_id FROM nt));
    RETURN NULL;
END
$$;

-- rows_need_url: as rows_need_crawl, and each inserted row's URL exists.
CREATE FUNCTION rows_need_url() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    missing text;
BEGIN
    PERFORM need_crawls(TG_TABLE_NAME, ARRAY(SELECT DISTINCT crawl_id FROM nt));
    SELECT encode(n.url_hash, 'hex') INTO missing FROM nt n
        WHERE NOT EXISTS (SELECT 1 FROM urls u WHERE u.crawl_id = n.crawl_id AND u.url_hash = n.url_hash)
        LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'insert into % names URL %, which is not there', TG_TABLE_NAME, missing
            USING ERRCODE = 'foreign_key_violation';
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER urls_need_crawl AFTER INSERT ON urls REFERENCING NEW TABLE AS nt
    FOR EACH STATEMENT EXECUTE FUNCTION rows_need_crawl();
CREATE TRIGGER payloads_need_crawl AFTER INSERT ON payloads REFERENCING NEW TABLE AS nt
    FOR EACH STATEMENT EXECUTE FUNCTION rows_need_crawl();
CREATE TRIGGER crawl_hosts_need_crawl AFTER INSERT ON crawl_hosts REFERENCING NEW TABLE AS nt
    FOR EACH STATEMENT EXECUTE FUNCTION rows_need_crawl();
CREATE TRIGGER fetches_need_url AFTER INSERT ON fetches REFERENCING NEW TABLE AS nt
    FOR EACH STATEMENT EXECUTE FUNCTION rows_need_url();
CREATE TRIGGER documents_need_url AFTER INSERT ON documents REFERENCING NEW TABLE AS nt
    FOR EACH STATEMENT EXECUTE FUNCTION rows_need_url();

-- A crawl's rows in these tables go with it. (store/delete.go deletes them table by table
-- first; this is for any other delete of a crawl.)
CREATE FUNCTION crawls_drop_rows() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM urls u USING gone g WHERE u.crawl_id = g.id;
    DELETE FROM payloads p USING gone g WHERE p.crawl_id = g.id;
    DELETE FROM crawl_hosts h USING gone g WHERE h.crawl_id = g.id;
    RETURN NULL;
END
$$;

CREATE TRIGGER crawls_rows_gone AFTER DELETE ON crawls REFERENCING OLD TABLE AS gone
    FOR EACH STATEMENT EXECUTE FUNCTION crawls_drop_rows();

-- A URL's fetches and document go with it (the document's keys with the document, 0018).
-- Each delete looks first whether the URLs' crawls have any rows left there: a crawl's delete
-- has removed them before its URLs, and probing every URL again would cost as much as the
-- delete did.
CREATE FUNCTION urls_drop_rows() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    crawl_ids text[];
BEGIN
    SELECT array_agg(DISTINCT crawl_id) INTO crawl_ids FROM gone;
    IF EXISTS (SELECT 1 FROM fetches WHERE crawl_id = ANY (crawl_ids)) THEN
        DELETE FROM fetches f USING gone g WHERE f.crawl_id = g.crawl_id AND f.url_hash = g.url_hash;
    END IF;
    IF EXISTS (SELECT 1 FROM documents WHERE crawl_id = ANY (crawl_ids)) THEN
        DELETE FROM documents d USING gone g WHERE d.crawl_id = g.crawl_id AND d.url_hash = g.url_hash;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER urls_rows_gone AFTER DELETE ON urls REFERENCING OLD TABLE AS gone
    FOR EACH STATEMENT EXECUTE FUNCTION urls_drop_rows();
