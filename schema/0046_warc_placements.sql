-- Where a capture's record sits in the crawl's WARC files is written when its file is saved,
-- in a narrow table of its own, not by rewriting the capture's row (issue 49). The UPDATE of
-- fetches it replaces wrote each capture's whole row again (about 1.3 KB with its request and
-- response heads) and a new entry in each of fetches' indexes, and left the old row for
-- vacuum: 11% of the WAL of a 4-minute bench, and in an hour's run one statement a WARC file
-- of 11-16 s, 0.6-2.8 million buffers and 39-194 MB of WAL.
-- warc_pending lists the crawl's captures (fetches with an HTTP status) not yet in a WARC
-- file, with what the archiver asks of them before it writes (when fetched, how many bytes):
-- a trigger on fetches adds each capture as it is inserted, whichever process inserts it (a
-- fetch worker of the release before this one too), and the archiver removes them with their
-- placement (store.Archive.SaveWARCFile). It holds the archiver's lag, where the partial index
-- it replaces (fetches_unarchived) was cleared only by vacuum; a crawl that writes no WARC
-- files (warc.off) keeps its captures listed until it is deleted, as that index did.
-- Neither table has a foreign key (a per-row check on each insert): each row is written by the
-- statement that has its fetch at hand, and a crawl's deletion removes them before its fetches
-- (store.crawlTables), a placement found through its fetch.

-- Fetch writes wait from here until this migration commits: the copies below see every capture
-- committed before, and the trigger lists every one after (whatever the isolation level).
LOCK TABLE fetches IN SHARE ROW EXCLUSIVE MODE;

CREATE TABLE warc_placements (
    fetch_id    bigint PRIMARY KEY,                -- fetches.id
    warc_file   text NOT NULL,                     -- warc_files.name
    warc_offset bigint NOT NULL,
    warc_length bigint NOT NULL
);

CREATE TABLE warc_pending (
    crawl_id   text NOT NULL,
    fetch_id   bigint NOT NULL,                    -- fetches.id
    fetched_at timestamptz NOT NULL,
    bytes      bigint NOT NULL,
    PRIMARY KEY (crawl_id, fetch_id)
);

CREATE FUNCTION warc_pending_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO warc_pending (crawl_id, fetch_id, fetched_at, bytes)
    SELECT crawl_id, id, fetched_at, coalesce(bytes, 0) FROM nt WHERE status IS NOT NULL;
    RETURN NULL;
END $$;
CREATE TRIGGER fetches_warc_pending AFTER INSERT ON fetches REFERENCING NEW TABLE AS nt
    FOR EACH STATEMENT EXECUTE FUNCTION warc_pending_inserted();

INSERT INTO warc_placements (fetch_id, warc_file, warc_offset, warc_length)
SELECT id, warc_file, coalesce(warc_offset, 0), coalesce(warc_length, 0) FROM fetches WHERE warc_file IS NOT NULL;
INSERT INTO warc_pending (crawl_id, fetch_id, fetched_at, bytes)
SELECT crawl_id, id, fetched_at, coalesce(bytes, 0) FROM fetches WHERE warc_file IS NULL AND status IS NOT NULL;

DROP INDEX fetches_unarchived;
ALTER TABLE fetches DROP COLUMN warc_file, DROP COLUMN warc_offset, DROP COLUMN warc_length;
