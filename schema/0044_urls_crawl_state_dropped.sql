-- urls_crawl_state's readers ask each state's partial index since 0043.
DROP INDEX IF EXISTS urls_crawl_state;
