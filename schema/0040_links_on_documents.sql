-- A page's out-links live on its document: three arrays in the page's order (a migrated
-- page's: by target) — the targets' URL hashes, how the page links each (parse.Link*), whether it said nofollow. A row a link
-- under two indexes cost a page about 15 heap rows, 30 index entries, 88 buffers and 3 KB of
-- WAL, the largest writer of WAL a page (issue 49); on the document they cost a few hundred
-- bytes of a row the save writes anyway. A page saved again holds the links of its last save.
-- In-links (the URL view's) are found through a GIN index of the targets.
-- The migration rewrites every document with links and builds the index while the table is
-- locked: saves of documents wait for it (README, "Upgrading workers").
SET LOCAL maintenance_work_mem = '256MB';
ALTER TABLE documents ADD COLUMN IF NOT EXISTS link_to bytea[],
    ADD COLUMN IF NOT EXISTS link_kind text[],
    ADD COLUMN IF NOT EXISTS link_nofollow boolean[];
UPDATE documents d SET link_to = l.t, link_kind = l.k, link_nofollow = l.n
FROM (SELECT crawl_id, from_hash, array_agg(to_hash ORDER BY to_hash) AS t, array_agg(kind ORDER BY to_hash) AS k,
        array_agg(nofollow ORDER BY to_hash) AS n
    FROM links GROUP BY crawl_id, from_hash) l
WHERE d.crawl_id = l.crawl_id AND d.url_hash = l.from_hash;
DROP TABLE links;
CREATE INDEX IF NOT EXISTS documents_link_to ON documents USING gin (link_to);
