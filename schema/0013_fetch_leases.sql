-- A fetch lease: one fetch activity holding its host for minutes, and the processing child
-- that runs beside it. The lease's pages are found by their claim owner (urls.claimed_by,
-- index urls_fetched_owner); this row says whether the lease is over, so its processing
-- knows when the last page has been fetched (Store.LeasePages).
CREATE TABLE fetch_leases (
    owner      text PRIMARY KEY,
    host       text NOT NULL,
    done_at    timestamptz,
    created_at timestamptz NOT NULL DEFAULT now()
);
