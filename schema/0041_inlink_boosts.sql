-- A queued URL's in-link boosts are counted, and stop at store.MaxInLinkBoosts. Each further
-- link to a queued URL raised its priority, a rewrite of its row under all five of its
-- queued-state indexes (priority orders the claim): 1.2 rows a fetched page on make bench's
-- long-tailed web, most of them the same few URLs a host's pages all link (issue 49). Past
-- ten links a URL is already among the host's first; more adds order no one can see.
-- (A new column with a constant default is a catalog change: no row is rewritten. URLs queued
-- before it count from zero.)
ALTER TABLE urls ADD COLUMN IF NOT EXISTS boosts smallint NOT NULL DEFAULT 0;
