-- What the browser loaded through the worker while it rendered a page (its same-host
-- subresources, fetched on the host's schedule): their request and response records, written
-- by the render stage as one stored blob of WARC records (loads_key), and where each response
-- record lies in it (loads), so the archiver copies them into the WARC file beside the DOM and
-- indexes them.
ALTER TABLE renders ADD COLUMN IF NOT EXISTS loads_key text;
ALTER TABLE renders ADD COLUMN IF NOT EXISTS loads jsonb;
