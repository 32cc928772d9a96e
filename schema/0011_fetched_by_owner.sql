-- Pages fetched and awaiting processing, by host and claim owner: a retried fetch batch, or a
-- host workflow whose batch failed, finds the pages its claims fetched but never reported
-- (Store.FetchedOwned). "fetched" is a passing state, so the index stays small.
CREATE INDEX urls_fetched_owner ON urls (host, claimed_by) WHERE state = 'fetched';
