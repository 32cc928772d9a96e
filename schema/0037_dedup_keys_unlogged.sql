-- The near-duplicate index is derived: each document's keys are on its row
-- (documents.dedup_keys, 0036), so dedup_keys need not be written to the WAL. Its inserts were
-- a quarter of the WAL a crawl wrote and a third of its full-page images (make bench with
-- pg_stat_statements, 2026-11-27, issue 49). A crash, or a standby promoted in a failover,
-- leaves both tables below empty; the next save of a document finds dedup_keys_state empty and
-- rebuilds the index from documents first (store.rebuildNearIndex).
ALTER TABLE dedup_keys SET UNLOGGED;

CREATE UNLOGGED TABLE IF NOT EXISTS dedup_keys_state (built_at timestamptz NOT NULL DEFAULT now());
INSERT INTO dedup_keys_state DEFAULT VALUES;
