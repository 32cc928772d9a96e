-- The crawl's durable state. Temporal holds control flow; Postgres holds every URL, document and
-- counter, so a workflow can be reset or lost without losing the crawl.

CREATE TABLE crawls (
    id          text PRIMARY KEY,                 -- the name in workflow ID crawl/<name>
    spec        jsonb NOT NULL,                   -- seeds, scope, budgets, politeness, recrawl policy
    state       text NOT NULL DEFAULT 'running',  -- running, paused, stopping, done
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz
);

-- One row per authority (host[:port]); shared by every crawl, like the HostWorkflow.
CREATE TABLE hosts (
    host               text PRIMARY KEY,
    robots_status      int,                       -- HTTP status of the last robots.txt fetch
    robots_body        text,                      -- capped at 500 KiB (RFC 9309 §2.5)
    robots_fetched_at  timestamptz,
    robots_expires_at  timestamptz,
    crawl_delay_ms     int,                       -- from robots.txt, after the cap
    throttle_delay_ms  int,                       -- operator override (throttle signal)
    max_in_flight      int NOT NULL DEFAULT 1,
    backoff_until      timestamptz,
    backoff_level      int NOT NULL DEFAULT 0,
    consecutive_errors int NOT NULL DEFAULT 0,
    paused             boolean NOT NULL DEFAULT false,
    fetched            bigint NOT NULL DEFAULT 0,
    errors             bigint NOT NULL DEFAULT 0,
    bytes              bigint NOT NULL DEFAULT 0,
    last_error         text,
    ip                 inet,                      -- last resolved address, for per-IP politeness
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now()
);

-- The frontier and the seen-set in one: a row per (crawl, normalized URL).
CREATE TABLE urls (
    crawl_id        text NOT NULL REFERENCES crawls(id) ON DELETE CASCADE,
    url_hash        bytea NOT NULL,                -- first 16 bytes of SHA-256(normalized URL)
    url             text NOT NULL,
    host            text NOT NULL,
    depth           int NOT NULL DEFAULT 0,
    priority        real NOT NULL DEFAULT 0,
    source          text NOT NULL DEFAULT 'link',  -- seed, link, sitemap, redirect, api
    state           text NOT NULL DEFAULT 'queued',-- queued, claimed, fetched, skipped, dead
    skip_reason     text,
    next_fetch_at   timestamptz NOT NULL DEFAULT now(),
    claimed_until   timestamptz,                   -- lease: a lost claim is retaken after this
    attempts        int NOT NULL DEFAULT 0,
    fetch_count     int NOT NULL DEFAULT 0,
    last_status     int,
    last_fetched_at timestamptz,
    last_error      text,
    etag            text,
    last_modified   text,
    content_hash    bytea,
    simhash         bigint,
    change_count    int NOT NULL DEFAULT 0,
    unchanged_count int NOT NULL DEFAULT 0,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (crawl_id, url_hash)
);
-- The HostWorkflow's claim: due URLs of one host, best first.
CREATE INDEX urls_claim ON urls (host, priority DESC, next_fetch_at) WHERE state = 'queued';
CREATE INDEX urls_claimed ON urls (host, claimed_until) WHERE state = 'claimed';
CREATE INDEX urls_crawl_state ON urls (crawl_id, state);

-- Each fetch of a URL: the change history recrawl scheduling learns from.
CREATE TABLE fetches (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    crawl_id     text NOT NULL,
    url_hash     bytea NOT NULL,
    fetch_key    text NOT NULL UNIQUE,            -- idempotence: a retried activity writes once
    fetched_at   timestamptz NOT NULL,
    status       int,
    duration_ms  int,
    bytes        bigint,
    truncated    boolean NOT NULL DEFAULT false,
    content_type text,
    content_hash bytea,
    body_key     text,
    final_url    text,
    error        text,
    FOREIGN KEY (crawl_id, url_hash) REFERENCES urls (crawl_id, url_hash) ON DELETE CASCADE
);
CREATE INDEX fetches_url ON fetches (crawl_id, url_hash, fetched_at DESC);

CREATE TABLE documents (
    crawl_id     text NOT NULL,
    url_hash     bytea NOT NULL,
    content_hash bytea NOT NULL,
    body_key     text NOT NULL,                   -- MinIO key of the compressed raw body
    text_key     text,                            -- MinIO key of the extracted text
    title        text,
    lang         text,
    charset      text,
    content_type text,
    size         bigint NOT NULL,
    dup_of       bytea,                           -- url_hash of the document this duplicates
    dup_kind     text,                            -- exact, simhash, minhash
    simhash      bigint,
    processed_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (crawl_id, url_hash),
    FOREIGN KEY (crawl_id, url_hash) REFERENCES urls (crawl_id, url_hash) ON DELETE CASCADE
);
CREATE INDEX documents_content ON documents (crawl_id, content_hash);

-- The web graph.
CREATE TABLE links (
    crawl_id  text NOT NULL,
    from_hash bytea NOT NULL,
    to_hash   bytea NOT NULL,
    nofollow  boolean NOT NULL DEFAULT false,
    PRIMARY KEY (crawl_id, from_hash, to_hash)
);
CREATE INDEX links_to ON links (crawl_id, to_hash);

-- URLs that failed for good, with why and every attempt.
CREATE TABLE dead_letters (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    crawl_id    text NOT NULL,
    url_hash    bytea NOT NULL,
    url         text NOT NULL,
    host        text NOT NULL,
    reason      text NOT NULL,
    attempts    jsonb NOT NULL DEFAULT '[]',
    created_at  timestamptz NOT NULL DEFAULT now(),
    replayed_at timestamptz,
    UNIQUE (crawl_id, url_hash, created_at)
);
CREATE INDEX dead_letters_host ON dead_letters (host, reason) WHERE replayed_at IS NULL;
