-- The GIN index of every document's out-link targets (0040) served one question: the URL
-- view's in-links. Each saved page paid for it as it was saved: in a bench run (issue 49) the
-- document save's statement read 33.5 buffers and wrote 2.8 KB of WAL a page with it, 18.1
-- and 1.8 KB without, and autovacuum merged its pending list besides. The URL view now reads
-- the crawl's documents for in-links, bounded in time (store.inLinksOf): about half a
-- microsecond a document, once each time an operator opens the view.
DROP INDEX IF EXISTS documents_link_to;
