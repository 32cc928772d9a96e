-- What the crawl loop needs beyond the initial tables: admission budgets, redirect hops,
-- claim bookkeeping, robots sitemaps, and document flags from parsing.

ALTER TABLE crawls
    ADD COLUMN max_pages          bigint NOT NULL DEFAULT 0,  -- 0: unlimited
    ADD COLUMN max_pages_per_host int    NOT NULL DEFAULT 0,  -- 0: unlimited
    ADD COLUMN admitted           bigint NOT NULL DEFAULT 0;  -- URLs admitted within the budget

-- Admission counts per (crawl, host), for the per-host page budget.
CREATE TABLE crawl_hosts (
    crawl_id text NOT NULL REFERENCES crawls(id) ON DELETE CASCADE,
    host     text NOT NULL,
    admitted int  NOT NULL DEFAULT 0,
    PRIMARY KEY (crawl_id, host)
);

-- URL states: queued -> claimed -> fetched (HTML awaiting processing) -> done,
-- or skipped (with skip_reason) or dead (dead-lettered).
ALTER TABLE urls ADD COLUMN hops int NOT NULL DEFAULT 0; -- redirects followed to reach this URL
CREATE INDEX urls_due_by_crawl ON urls (crawl_id, host, next_fetch_at) WHERE state = 'queued';

ALTER TABLE hosts
    ADD COLUMN last_claim_at   timestamptz,
    ADD COLUMN robots_sitemaps text[] NOT NULL DEFAULT '{}';

ALTER TABLE documents
    ADD COLUMN canonical text,
    ADD COLUMN noindex   boolean NOT NULL DEFAULT false,
    ADD COLUMN nofollow  boolean NOT NULL DEFAULT false,
    ADD COLUMN links_out int     NOT NULL DEFAULT 0;

-- A retried activity must not dead-letter a URL twice.
ALTER TABLE dead_letters ADD COLUMN dl_key text;
CREATE UNIQUE INDEX dead_letters_key ON dead_letters (dl_key);
