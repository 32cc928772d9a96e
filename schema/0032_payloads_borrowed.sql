-- A crawl's borrowed bodies in digest order (a package carrying them pages through them).
CREATE INDEX IF NOT EXISTS payloads_borrowed_by_crawl ON payloads (crawl_id, content_hash) WHERE owner_crawl <> crawl_id;
