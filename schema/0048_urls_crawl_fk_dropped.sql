-- urls' foreign key to crawls checked every inserted URL against its crawl's row with a query
-- of its own (2.6 a fetched page in make bench, issue 49). The admission, the one writer of
-- new URLs, reads its crawl's row first and holds it KEY SHARE (or FOR NO KEY UPDATE, under
-- a budget) until it commits (store.lockBudgetsSQL), and a crawl's deletion locks the row
-- FOR UPDATE and deletes its URLs itself (store.Deletes): the check once a statement, in the
-- statement that reads the row anyway.
ALTER TABLE urls DROP CONSTRAINT IF EXISTS urls_crawl_id_fkey;
