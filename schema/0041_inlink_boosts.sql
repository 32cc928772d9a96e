-- A queued URL's in-link boosts are counted, and stop at store.MaxInLinkBoosts. Each further
-- link to a queued URL raised its priority: a locked row and a new version of it (WAL, and an
-- entry in each of its indexes when its page has no room), 1.2 rows a fetched page on make
-- bench's long-tailed web, and the same few URLs that every page of a host links again and
-- again. Past ten links a URL is already among the host's first; more adds order no one sees.
-- (A new column with a constant default is a catalog change: no row is rewritten. URLs queued
-- before it count from zero.)
ALTER TABLE urls ADD COLUMN IF NOT EXISTS boosts smallint NOT NULL DEFAULT 0;
