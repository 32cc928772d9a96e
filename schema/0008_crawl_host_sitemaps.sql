-- Sitemap discovery runs once per crawl and host: the first batch of a crawl on a host admits
-- the sitemaps its robots.txt names (or /sitemap.xml), even when robots.txt itself was cached
-- by another crawl.
ALTER TABLE crawl_hosts ADD COLUMN sitemaps_at timestamptz;
