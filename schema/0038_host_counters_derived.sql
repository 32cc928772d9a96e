-- A host's counters (fetched, errors, bytes, last_error) are no longer written: recording a
-- group of fetches upserted them on the hosts rows the scheduler books its windows on, and a
-- booking waited for the group's commit (a fifth of Postgres's statement time in make bench,
-- 2026-11-27, issue 49). A host's record now sums its fetches when asked. The columns stay
-- until no worker older than this migration can be running (they are not read).
COMMENT ON COLUMN hosts.fetched IS 'unused since 0038: a host record sums its fetches';
COMMENT ON COLUMN hosts.errors IS 'unused since 0038: a host record sums its fetches';
COMMENT ON COLUMN hosts.bytes IS 'unused since 0038: a host record sums its fetches';
COMMENT ON COLUMN hosts.last_error IS 'unused since 0038: a host record sums its fetches';
