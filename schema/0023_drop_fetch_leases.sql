-- Lease rows told a host workflow's own processing child (host revisions before 3) that its
-- fetch lease was over. Revision 4, the only one kept, processes pages through the crawl's
-- processing children, which claim fetched pages by state, so nothing reads these rows; the
-- revision-4 code still wrote one per abandoned lease, never dropped.
DROP TABLE IF EXISTS fetch_leases;
