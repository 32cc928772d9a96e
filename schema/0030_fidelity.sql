-- Replay fidelity (trawler qa): for each sampled page of a crawl, how much its replay from the
-- crawl's captures alone looks like the page rendered live by the same browser. One row per
-- page, the last measure kept.
CREATE TABLE IF NOT EXISTS fidelity (
    crawl_id    text        NOT NULL REFERENCES crawls (id) ON DELETE CASCADE,
    url         text        NOT NULL,
    pixels      real        NOT NULL,
    text_match  real        NOT NULL,
    score       real        NOT NULL,
    requests    int         NOT NULL DEFAULT 0, -- requests the replay made
    missing     int         NOT NULL DEFAULT 0, -- of them not in the archive
    missing_urls text[],                        -- the first few of those, each clipped
    error       text,
    measured_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (crawl_id, url)
);
