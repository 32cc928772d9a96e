-- robots.txt is cached per scheme (RFC 9309 §2.3: the file applies to the scheme, host and port
-- it was fetched from). http://example.com/robots.txt and https://example.com/robots.txt are
-- two files; a host's one workflow still paces both schemes' requests as one host.
--
-- The host-wide copy is dropped, not carried over: the scheme it was fetched with was never
-- recorded, and a cache refills with one request per host and scheme.
CREATE TABLE robots (
    host           text        NOT NULL REFERENCES hosts (host) ON DELETE CASCADE,
    scheme         text        NOT NULL CHECK (scheme IN ('http', 'https')),
    status         int         NOT NULL,                -- HTTP status (0: unreachable)
    body           bytea       NOT NULL DEFAULT '',     -- as received, capped at 500 KiB (§2.5)
    fetched_at     timestamptz NOT NULL,
    expires_at     timestamptz NOT NULL,
    sitemaps       text[]      NOT NULL DEFAULT '{}',
    crawl_delay_ms int,                                  -- its Crawl-delay for the product token that fetched it
    PRIMARY KEY (host, scheme)
);

ALTER TABLE hosts
    DROP COLUMN robots_status,
    DROP COLUMN robots_body,
    DROP COLUMN robots_fetched_at,
    DROP COLUMN robots_expires_at,
    DROP COLUMN robots_sitemaps;

COMMENT ON COLUMN hosts.crawl_delay_ms IS 'the largest Crawl-delay of the host''s robots.txt files (http and https)';
