-- A crawl's progress from counters kept with its writes, not from scans of urls and fetches
-- every few seconds (a scan of 300,000 URLs costs ~350 ms of Postgres CPU; progress is read
-- every 5 s, so a large crawl spent a good part of a core on it).
--
-- crawl_counts holds deltas: statement-level triggers with transition tables add one row per
-- (crawl, key) a statement changed, so a batch of 200 pages costs one small insert, and
-- writers never wait on one another for a hot counter row. The sum per key is the count;
-- the progress reader folds the rows into one per key now and then (Store.CrawlCounts).
--
-- Keys: url:<state> (URLs by state), skip:<reason> (skipped URLs by reason), fetched (URLs
-- fetched at least once without error), fetch:error, fetch:<class> (failed fetches by class),
-- fetch:bytes, fetch:any (every fetch; first_at/last_at are the first and last fetch
-- times), pages (documents), hosts (crawl_hosts).
CREATE TABLE crawl_counts (
    crawl_id text NOT NULL,
    key      text NOT NULL,
    n        bigint NOT NULL,
    first_at timestamptz,
    last_at  timestamptz
);
CREATE INDEX crawl_counts_crawl ON crawl_counts (crawl_id, key);

-- The class of a failed fetch, one definition for the counters and for a scan.
CREATE FUNCTION fetch_error_class(status integer, error text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN status >= 500 THEN '5xx' WHEN status IN (408, 429) THEN status::text
        WHEN status IS NOT NULL THEN 'other' WHEN error ILIKE '%timed out%' THEN 'timeout' ELSE 'network' END
$$;

-- URLs: by state and skip reason. An update that moves no URL between states nets to nothing
-- and inserts no row.
CREATE FUNCTION count_urls_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO crawl_counts (crawl_id, key, n)
    SELECT crawl_id, k, count(*) FROM (
        SELECT crawl_id, 'url:' || state AS k FROM nt
        UNION ALL SELECT crawl_id, 'skip:' || coalesce(skip_reason, '') FROM nt WHERE state = 'skipped') x
    GROUP BY 1, 2;
    RETURN NULL;
END $$;

CREATE FUNCTION count_urls_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO crawl_counts (crawl_id, key, n)
    SELECT crawl_id, k, sum(d) FROM (
        SELECT crawl_id, 'url:' || state AS k, -1 AS d FROM ot
        UNION ALL SELECT crawl_id, 'skip:' || coalesce(skip_reason, ''), -1 FROM ot WHERE state = 'skipped'
        UNION ALL SELECT crawl_id, 'url:' || state, 1 FROM nt
        UNION ALL SELECT crawl_id, 'skip:' || coalesce(skip_reason, ''), 1 FROM nt WHERE state = 'skipped') x
    GROUP BY 1, 2 HAVING sum(d) <> 0;
    RETURN NULL;
END $$;

CREATE FUNCTION count_urls_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO crawl_counts (crawl_id, key, n)
    SELECT crawl_id, k, -count(*) FROM (
        SELECT crawl_id, 'url:' || state AS k FROM ot
        UNION ALL SELECT crawl_id, 'skip:' || coalesce(skip_reason, '') FROM ot WHERE state = 'skipped') x
    GROUP BY 1, 2;
    RETURN NULL;
END $$;

-- Fetches are only ever inserted. "fetched" counts a URL at its first fetch without error
-- (an earlier one is found through fetches_url).
CREATE FUNCTION count_fetches_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO crawl_counts (crawl_id, key, n, first_at, last_at)
    SELECT crawl_id, 'fetch:any', count(*), min(fetched_at), max(fetched_at) FROM nt GROUP BY 1
    UNION ALL SELECT crawl_id, 'fetch:bytes', coalesce(sum(bytes), 0), NULL, NULL FROM nt GROUP BY 1
    UNION ALL SELECT crawl_id, 'fetch:error', count(*), NULL, NULL FROM nt WHERE error IS NOT NULL GROUP BY 1
    UNION ALL SELECT crawl_id, 'fetch:' || fetch_error_class(status, error),
        count(*), NULL, NULL
        FROM nt WHERE error IS NOT NULL GROUP BY 1, 2
    UNION ALL SELECT crawl_id, 'fetched', count(DISTINCT url_hash), NULL, NULL FROM nt
        WHERE error IS NULL AND NOT EXISTS (SELECT 1 FROM fetches f
            WHERE f.crawl_id = nt.crawl_id AND f.url_hash = nt.url_hash AND f.error IS NULL AND f.id < nt.id)
        GROUP BY 1 HAVING count(DISTINCT url_hash) > 0;
    RETURN NULL;
END $$;

CREATE FUNCTION count_documents_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO crawl_counts (crawl_id, key, n) SELECT crawl_id, 'pages', count(*) FROM nt GROUP BY 1;
    RETURN NULL;
END $$;

CREATE FUNCTION count_documents_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO crawl_counts (crawl_id, key, n) SELECT crawl_id, 'pages', -count(*) FROM ot GROUP BY 1;
    RETURN NULL;
END $$;

CREATE FUNCTION count_crawl_hosts_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO crawl_counts (crawl_id, key, n) SELECT crawl_id, 'hosts', count(*) FROM nt GROUP BY 1;
    RETURN NULL;
END $$;

CREATE FUNCTION count_crawl_hosts_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO crawl_counts (crawl_id, key, n) SELECT crawl_id, 'hosts', -count(*) FROM ot GROUP BY 1;
    RETURN NULL;
END $$;

-- Creating the triggers locks the tables against writers until this migration commits, so the
-- counts below, taken after, miss no write and count none twice.
CREATE TRIGGER urls_counted_insert AFTER INSERT ON urls REFERENCING NEW TABLE AS nt
    FOR EACH STATEMENT EXECUTE FUNCTION count_urls_inserted();
CREATE TRIGGER urls_counted_update AFTER UPDATE ON urls REFERENCING OLD TABLE AS ot NEW TABLE AS nt
    FOR EACH STATEMENT EXECUTE FUNCTION count_urls_updated();
CREATE TRIGGER urls_counted_delete AFTER DELETE ON urls REFERENCING OLD TABLE AS ot
    FOR EACH STATEMENT EXECUTE FUNCTION count_urls_deleted();
CREATE TRIGGER fetches_counted_insert AFTER INSERT ON fetches REFERENCING NEW TABLE AS nt
    FOR EACH STATEMENT EXECUTE FUNCTION count_fetches_inserted();
CREATE TRIGGER documents_counted_insert AFTER INSERT ON documents REFERENCING NEW TABLE AS nt
    FOR EACH STATEMENT EXECUTE FUNCTION count_documents_inserted();
CREATE TRIGGER documents_counted_delete AFTER DELETE ON documents REFERENCING OLD TABLE AS ot
    FOR EACH STATEMENT EXECUTE FUNCTION count_documents_deleted();
CREATE TRIGGER crawl_hosts_counted_insert AFTER INSERT ON crawl_hosts REFERENCING NEW TABLE AS nt
    FOR EACH STATEMENT EXECUTE FUNCTION count_crawl_hosts_inserted();
CREATE TRIGGER crawl_hosts_counted_delete AFTER DELETE ON crawl_hosts REFERENCING OLD TABLE AS ot
    FOR EACH STATEMENT EXECUTE FUNCTION count_crawl_hosts_deleted();

-- The crawls that exist already start from a count of what they hold.
INSERT INTO crawl_counts (crawl_id, key, n)
SELECT crawl_id, 'url:' || state, count(*) FROM urls GROUP BY 1, 2
UNION ALL SELECT crawl_id, 'skip:' || coalesce(skip_reason, ''), count(*) FROM urls WHERE state = 'skipped' GROUP BY 1, 2
UNION ALL SELECT crawl_id, 'pages', count(*) FROM documents GROUP BY 1
UNION ALL SELECT crawl_id, 'hosts', count(*) FROM crawl_hosts GROUP BY 1
UNION ALL SELECT crawl_id, 'fetched', count(DISTINCT url_hash) FROM fetches WHERE error IS NULL GROUP BY 1
UNION ALL SELECT crawl_id, 'fetch:bytes', coalesce(sum(bytes), 0) FROM fetches GROUP BY 1
UNION ALL SELECT crawl_id, 'fetch:error', count(*) FROM fetches WHERE error IS NOT NULL GROUP BY 1
UNION ALL SELECT crawl_id, 'fetch:' || fetch_error_class(status, error), count(*)
    FROM fetches WHERE error IS NOT NULL GROUP BY 1, 2;
INSERT INTO crawl_counts (crawl_id, key, n, first_at, last_at)
SELECT crawl_id, 'fetch:any', count(*), min(fetched_at), max(fetched_at) FROM fetches GROUP BY 1;
