-- A URL statement that wrote no row adds no count and runs no counting query: most claims
-- that find nothing due are such statements, and their trigger's grouped insert over empty
-- transition tables was most of what counting cost on make bench (issue 49).
CREATE OR REPLACE FUNCTION count_urls_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM nt) THEN
        RETURN NULL;
    END IF;
    INSERT INTO crawl_counts (crawl_id, key, n)
    SELECT crawl_id, k, count(*) FROM (
        SELECT crawl_id, 'url:' || state AS k FROM nt
        UNION ALL SELECT crawl_id, 'skip:' || coalesce(skip_reason, '') FROM nt WHERE state = 'skipped') x
    GROUP BY 1, 2;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION count_urls_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM nt) THEN
        RETURN NULL;
    END IF;
    INSERT INTO crawl_counts (crawl_id, key, n)
    SELECT crawl_id, k, sum(d) FROM (
        SELECT crawl_id, 'url:' || state AS k, -1 AS d FROM ot
        UNION ALL SELECT crawl_id, 'skip:' || coalesce(skip_reason, ''), -1 FROM ot WHERE state = 'skipped'
        UNION ALL SELECT crawl_id, 'url:' || state, 1 FROM nt
        UNION ALL SELECT crawl_id, 'skip:' || coalesce(skip_reason, ''), 1 FROM nt WHERE state = 'skipped') x
    GROUP BY 1, 2 HAVING sum(d) <> 0;
    RETURN NULL;
END $$;
