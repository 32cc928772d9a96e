-- A document's near-duplicate keys are kept on its own row (documents.dedup_keys), so the keys
-- it filed before are found by the index's primary key when it is saved again or deleted,
-- and dedup_keys needs no second index. dedup_keys_doc (crawl_id, url_hash) was the largest
-- writer of a page's save: 13–16 index entries a document, read only to delete a re-saved
-- or deleted document's keys (issue 49). Process workers of the release before must be stopped
-- before this runs (README, Upgrading workers): they file keys without this column.
ALTER TABLE documents ADD COLUMN IF NOT EXISTS dedup_keys bigint[];

UPDATE documents d SET dedup_keys = k.keys
    FROM (SELECT crawl_id, url_hash, array_agg(key ORDER BY key) AS keys FROM dedup_keys GROUP BY 1, 2) k
    WHERE d.crawl_id = k.crawl_id AND d.url_hash = k.url_hash;

-- Keys whose document is gone (none should be: the trigger deletes them with it).
DELETE FROM dedup_keys k WHERE NOT EXISTS
    (SELECT 1 FROM documents d WHERE d.crawl_id = k.crawl_id AND d.url_hash = k.url_hash);

CREATE OR REPLACE FUNCTION documents_drop_keys() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM dedup_keys k
        USING (SELECT crawl_id, url_hash, unnest(dedup_keys) AS key FROM gone WHERE dedup_keys IS NOT NULL) g
        WHERE k.crawl_id = g.crawl_id AND k.key = g.key AND k.url_hash = g.url_hash;
    RETURN NULL;
END
$$;

DROP INDEX IF EXISTS dedup_keys_doc;
