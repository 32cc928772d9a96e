-- Deliveries (spec.outputs): each output reads the crawl's documents in the order their saves
-- committed and keeps a cursor, so a document saved while a batch is sent is never skipped.
-- stored_tx is the transaction that saved (or changed) the document: a cursor only passes
-- transactions older than every one still running (pg_snapshot_xmin), which commit no more.
-- Rows saved before this migration read as transaction 1: an output delivers them first.
ALTER TABLE documents ADD COLUMN IF NOT EXISTS stored_tx xid8 NOT NULL DEFAULT '1';
ALTER TABLE documents ALTER COLUMN stored_tx SET DEFAULT pg_current_xact_id();
CREATE INDEX IF NOT EXISTS documents_stored ON documents (crawl_id, stored_tx, url_hash);

-- One row per output of a crawl: where its cursor stands and what it delivered.
CREATE TABLE IF NOT EXISTS deliveries (
    crawl_id    text        NOT NULL REFERENCES crawls (id) ON DELETE CASCADE,
    output      text        NOT NULL,
    cursor_tx   xid8        NOT NULL DEFAULT '0',
    cursor_hash bytea       NOT NULL DEFAULT '\x',
    records     bigint      NOT NULL DEFAULT 0,  -- delivered (a batch sent again counts again)
    batches     bigint      NOT NULL DEFAULT 0,
    dead        bigint      NOT NULL DEFAULT 0,  -- records in dead-lettered batches
    tries       int         NOT NULL DEFAULT 0,  -- failed tries of the batch at the cursor
    last_error  text,                            -- the last failed try's error, clipped
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (crawl_id, output)
);

-- A batch every try of which failed: the range of documents it held, to send again.
CREATE TABLE IF NOT EXISTS delivery_dead_letters (
    id          bigserial   PRIMARY KEY,
    crawl_id    text        NOT NULL REFERENCES crawls (id) ON DELETE CASCADE,
    output      text        NOT NULL,
    from_tx     xid8        NOT NULL,  -- where the cursor stood: the batch is what follows (exclusive)
    from_hash   bytea       NOT NULL,
    to_tx       xid8        NOT NULL,  -- its last document (inclusive)
    to_hash     bytea       NOT NULL,
    records     int         NOT NULL,
    attempts    int         NOT NULL,
    error       text        NOT NULL,
    at          timestamptz NOT NULL DEFAULT now(),
    replayed_at timestamptz,           -- sent again (trawler deliver --replay)
    UNIQUE (crawl_id, output, from_tx, from_hash)
);
