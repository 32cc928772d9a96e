-- Pages a crawl renders in headless Chromium (spec.render), queued by their processing and
-- claimed by the render role. A crawl is not done while a render waits: its DOM may hold
-- links. The rendered DOM is stored like a body (dom_key) and archived as a WARC conversion
-- record referring to the capture it was made from (fetch_id).
CREATE TABLE renders (
    crawl_id      text        NOT NULL REFERENCES crawls (id) ON DELETE CASCADE,
    url_hash      bytea       NOT NULL,
    fetch_id      bigint      NOT NULL,            -- the capture rendered (fetches.id)
    state         text        NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'done', 'failed')),
    attempts      int         NOT NULL DEFAULT 0,
    claimed_by    text,
    claimed_until timestamptz,
    rendered_at   timestamptz,
    dom_key       text,                            -- the rendered DOM, a body reference
    dom_bytes     int,
    requests      int,                             -- requests the page made
    blocked       int,                             -- of them refused (third party, robots.txt, budget)
    links         int,                             -- links of the DOM admitted or known
    error         text,
    warc_file     text,
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (crawl_id, url_hash, fetch_id)
);
CREATE INDEX renders_queued ON renders (crawl_id, created_at) WHERE state = 'queued';
CREATE INDEX renders_unarchived ON renders (crawl_id) WHERE state = 'done' AND warc_file IS NULL;
