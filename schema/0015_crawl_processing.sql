-- Processing per crawl (host workflow revision 3): a crawl's processing children claim its
-- fetched pages across hosts, a few hundred at a time, for a while (processing_until); a
-- claim whose holder died is taken over once it expires.
ALTER TABLE urls ADD COLUMN processing_by text, ADD COLUMN processing_until timestamptz;
-- Fetched pages of a crawl in the order fetched: what a processing claim reads, without
-- scanning the crawl's other URLs.
CREATE INDEX urls_crawl_fetched ON urls (crawl_id, updated_at) WHERE state = 'fetched';
