-- Dead-site cleanup: a host failing for good (DNS never resolves, front page 404/410) is retired
-- after a crawl's retireAfter; its pending URLs are marked skipped with the reason.
ALTER TABLE hosts
    ADD COLUMN failing_since  timestamptz,
    ADD COLUMN failing_reason text,
    ADD COLUMN retired_at     timestamptz,
    ADD COLUMN retired_reason text;
