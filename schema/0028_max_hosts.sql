-- A crawl's cap on hosts (spec maxHosts; 0: none) and how many it has, kept by admission under
-- the crawl's row lock: a site with wildcard subdomains costs a host workflow each, and a
-- crawl that follows its links must stop taking new hosts somewhere. URLs of hosts past the
-- cap are recorded, skipped as 'maxHosts'.
ALTER TABLE crawls ADD COLUMN IF NOT EXISTS max_hosts int NOT NULL DEFAULT 0;
ALTER TABLE crawls ADD COLUMN IF NOT EXISTS hosts int NOT NULL DEFAULT 0;
UPDATE crawls c SET hosts = (SELECT count(*) FROM crawl_hosts h WHERE h.crawl_id = c.id);
