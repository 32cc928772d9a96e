-- Links refused at admission, counted by reason per crawl (scope, depth, trap rules, caps), so
-- an operator sees what the frontier turned away and why.
CREATE TABLE crawl_rejections (
    crawl_id text NOT NULL REFERENCES crawls(id) ON DELETE CASCADE,
    reason   text NOT NULL,
    count    bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (crawl_id, reason)
);
