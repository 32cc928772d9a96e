-- A crawl's cookies per host (spec.cookies): the Set-Cookie headers the host sent, as sent,
-- with the URL and time each came with, so any worker's next lease of the host rebuilds the
-- same RFC 6265 jar (a worker's death loses none). Dropped with the crawl.
CREATE TABLE IF NOT EXISTS cookie_jars (
    crawl_id   text NOT NULL REFERENCES crawls(id) ON DELETE CASCADE,
    host       text NOT NULL,
    cookies    jsonb NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (crawl_id, host)
);
